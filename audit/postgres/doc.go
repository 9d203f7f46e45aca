// Package postgres is the decision log of package audit in a PostgreSQL
// database (pgx v5): the same log as audit/sqlite — the same rows, the
// same canonical payloads and hash chain (package auditchain), the same
// rules — for deployments where several ewp-mcp replicas share one
// database with the PostgreSQL ledger.
//
// # Schema (version 1)
//
// The tables live in their own schema, ewp_audit, beside the ledger's:
// audit_meta, decisions, approvals, approval_uses and events, as in the
// SQLite log (see its package documentation), with ids as bytea (a
// proposition id may hold a NUL). Triggers refuse UPDATE, DELETE and
// TRUNCATE on every table, whoever asks; Verify checks that they are
// present, enabled and unaltered, and every write transaction checks them
// too (one catalog query, with the chain lock): a writer refuses to extend
// a log whose triggers are missing or disabled. [Init] creates the schema
// and lets the ledger's server role (ewp_server), which every replica
// holds, SELECT and INSERT decisions, uses and events, but not approvals;
// the operators' role (ewp_operator) SELECT and INSERT approvals and
// events. No other role gets anything. An approval the gate honours must
// also be signed by an operator key (package audit).
//
// # Many writers, one chain
//
// Every write transaction takes pg_advisory_xact_lock(chainLock) first,
// reads the chain head, appends and commits before the lock is let go:
// the writers of all processes take turns, the chain never forks (the
// primary key on events.seq would refuse a fork even if a writer skipped
// the lock). Within a process, writes share commits (group commit, see
// writer), so a replica pays one lock turn per batch, not per Record.
//
// A single-use approval is used by the MAY_ACT decision it lifted, written
// in the same transaction (RecordUse), under the chain lock and
// UNIQUE(approval_id) on approval_uses: of any number of concurrent
// presentations across all replicas exactly one is recorded; the others
// find the use, write nothing, and get audit.ErrApprovalUsed. Row seqs
// are numbered by the writer, without gaps (see inTx). An idempotency key is unique per
// credential (a partial unique index), across replicas too.
//
// # Durability
//
// Record returns once its transaction committed on the server, with
// synchronous_commit=on for the log's write transactions whatever the
// server's or the pool's setting: the commit's WAL is flushed to disk
// (and with synchronous standbys configured, to them) before Record
// returns. TestSurvivesDatabaseRestart crashes the server (pg_ctl stop
// -m immediate) under a cluster whose default is off, and loses nothing.
package postgres
