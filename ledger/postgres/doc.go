// Package postgres is the EWP ledger in PostgreSQL (github.com/jackc/pgx/v5),
// for teams that run many ewp-mcp replicas and several ingest pipelines
// against one database. It keeps the SQLite ledger's rules from the same
// store-neutral code: immutable snapshots and record identity (package
// snapshot), appends that read latest under the write lock, and the same
// canonical event payloads and hash chain (package chain), so a ledger
// copied between the stores event by event has the same chain head, and
// Verify agrees on both. It implements ledger.Ledger, the interface
// ingest, the MCP server and the concept graph use, with the same result
// and error types: a refusal of the input is a *warrant.Error, a storage
// failure a *ledger.Error, a broken chain a *ledger.Break.
//
// # Writers and the chain
//
// Every write is one transaction that first takes a transaction-scoped
// advisory lock (pg_advisory_xact_lock), then reads the chain head and the
// next sequence numbers, checks the tail link, and appends. So writers in
// any number of processes and machines take turns on the one chain and
// never fork it or lose an append; readers never wait for them.
//
// # Append-only, enforced by the server
//
// Triggers refuse UPDATE and DELETE (per row) and TRUNCATE (per statement)
// on every ledger table, for every role, table owner included; only
// disabling the triggers (which every write notices, refusing to extend
// the chain) or dropping them gets past, and Verify finds any edit made
// that way. [Init] creates the schema and three group roles: a reader
// (SELECT only; replicas also open read-only transactions), a writer
// (SELECT and INSERT) and a server role (for the decision log).
//
// # Schema (version 1)
//
// The SQLite ledger's tables with ids as bytea (see schemaDDL), plus two
// derived, append-only search tables (propositions, assertion_text)
// holding folded text, trigram-indexed when pg_trgm is available.
package postgres
