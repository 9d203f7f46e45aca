// Package sqlite is the decision log of package audit in an SQLite file
// (modernc.org/sqlite, no cgo): the store behind ewp-mcp's accountable
// gate and ewp-audit. It implements audit.Log; the PostgreSQL store,
// audit/postgres, is a sibling package writing the same chain (one package
// per outside dependency; the domain stays in package audit, what the
// stores share in audit/auditchain).
//
// # Where the log lives
//
// The log is a file of its own, never inside the evidence ledger, which
// stays read-only for the server. For the ledger at X the log is at
// DefaultPath(X) = X + ".audit" (ewp.db → ewp.db.audit), unless --audit
// names another file. ewp-mcp creates it at start-up ([OpenOrCreate]);
// ewp-audit only opens it ([Open]), so a mistyped path is an error, not a
// new, empty log.
//
// # Schema (version 1)
//
//	audit_meta(key, value)                            schema_version
//	decisions(seq, decision_id, time_ns, tool, outcome, proposition_id,
//	          credential, idem_key, approval_id, body, body_sha256)
//	                     UNIQUE(decision_id); UNIQUE(credential, idem_key) where keyed;
//	                     indexes on time_ns, on pending decisions, on approval_id where set
//	approvals(seq, approval_id, decision_id, verdict, created_ns, body, body_sha256)
//	                     UNIQUE(approval_id), UNIQUE(decision_id): a decision is answered once
//	approval_uses(seq, approval_id, used_by, used_ns) UNIQUE(approval_id)
//	events(seq, tbl, row_seq, payload, prev_hash, hash)
//	                     hash = sha256(prev_hash ‖ payload)
//
// body is the decision's or approval's JSON (the audit types); the other
// columns are derived from it (ids in the form JSON reads them back as).
// Every row of decisions, approvals and approval_uses is recorded by one
// event whose payload is the canonical JSON of the row (body by its
// sha256), in the order the rows were written, so [Log.Verify] finds any
// edited, deleted or inserted row; triggers refuse UPDATE and DELETE on
// every table, and Verify also checks that they are all in place. A
// single-use approval is consumed by an INSERT into approval_uses: its
// UNIQUE constraint lets exactly one of concurrent consumers, in any
// process, succeed. An idempotency key is unique per caller credential.
//
// The hot path (Record) writes few B-trees, each at its end: the table,
// decision_id (time-ordered UUIDs), time_ns, and the events. Listings
// follow an index and never sort; filters by proposition or outcome scan
// (within a time window when given), as an operator's queries.
//
// # Durability and group commit
//
// Record returns only after its decision is committed, because the server
// sends a decision_id only after it is on record. One writer goroutine
// owns the write connection; writes queue on a channel and whatever
// queued during a commit shares the next transaction. A refused write (a
// duplicate idempotency key, a used approval) fails at its first statement
// and changes nothing, so the others in its batch still commit. Under 64
// concurrent callers that turns 64 commits into two or three.
//
// The file is in WAL mode with synchronous=NORMAL: a commit has written
// its WAL frames through the operating system before Record returns, so
// it survives the server process being killed at any instant (kill -9,
// an OOM kill, a crash); it may not survive the machine losing power
// before the next checkpoint, which FULL would guarantee at the price of
// an fsync per commit. Losing power loses the answers in flight too; a
// process crash must not lose an answer a client already has. Set
// Options.SyncFull where power loss matters more than throughput.
package sqlite
