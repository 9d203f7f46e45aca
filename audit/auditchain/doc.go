// Package auditchain is what every store of the decision log shares, so
// that SQLite and PostgreSQL write the same chain and judge the same
// writes: the rows as the chain commits to them (their canonical JSON
// payloads), the link hash, the verification report, the listing query,
// and the store-neutral rules of a write (what a decision must hold, when
// an approval can be consumed, which errors are refusals), and the group
// commit that batches their writes (GroupCommit, which runs a goroutine
// but leaves the transactions to the store). It does no I/O and reads no
// clock.
//
// Every row of decisions, approvals and approval_uses is recorded by one
// event whose payload is the canonical JSON of the row (the body by its
// sha256), chained as hash = sha256(prev_hash ‖ payload). A log copied
// from one store to the other keeps its head.
package auditchain
