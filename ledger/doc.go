// Package ledger holds the evidence ledger's domain (EWP §9): the
// interface every store implements ([Ledger]), and the types its methods
// take and return — stored snapshots, write and append results, concept-
// graph revisions, the chain head, the verify report and its [Break], and
// the storage [Error] that callers tell apart from a refusal of the input
// (a *warrant.Error).
//
// The types here are store-neutral and import no database driver; the
// stores are packages of their own that never import each other:
// ledger/sqlite (a file, modernc.org/sqlite) and ledger/postgres (pgx).
// Package store opens either by its --db value. The rules both keep live
// in store-neutral packages too: record identity in snapshot, the hash
// chain and its event payloads in chain; ledger/ledgertest is the suite
// both stores pass.
package ledger
