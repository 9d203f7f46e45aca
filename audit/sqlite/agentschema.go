package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The tables of agent identities, results, once-approval keys and
// budget counters, added to schema version 3 without changing it: a new
// log has them from the start, a log made before them gets them when a
// writer first opens it (addAgentTables), and audit_meta's row
// 'agent_tables' says they are there, so Verify expects their triggers
// exactly then (a log without them verifies as it always did). agents,
// agent_revocations and results are chained (auditchain.AgentTables);
// approval_keys is derived from the chained approvals, written with them
// and checked against them by Verify; all four are append-only. counters
// are mutable state outside the chain (audit/README.md, "Agents").
const agentsDDL = `
-- An agent identity as AddAgent stored it; a revocation is a row of
-- agent_revocations, so neither table is ever changed. credential_sha256
-- is the sha256 hex of the credential, unique: one credential names one
-- agent.
CREATE TABLE agents (
	seq               INTEGER PRIMARY KEY,
	name              TEXT NOT NULL UNIQUE,
	credential_sha256 TEXT NOT NULL UNIQUE,
	created_ns        INTEGER NOT NULL,
	body              BLOB NOT NULL,
	body_sha256       BLOB NOT NULL
);
CREATE TABLE agent_revocations (
	seq        INTEGER PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	revoked_ns INTEGER NOT NULL
);
-- What a forwarded call did, after its decision.
CREATE TABLE results (
	seq         INTEGER PRIMARY KEY,
	decision_id TEXT NOT NULL,
	status      TEXT NOT NULL,
	time_ns     INTEGER NOT NULL,
	body        BLOB NOT NULL,
	body_sha256 BLOB NOT NULL
);
CREATE INDEX results_decision ON results (decision_id, seq);
-- The lookup of OnceApprovalFor: an approved once approval naming a tool,
-- by tool and arguments hash, newest first (approval_seq is its
-- approvals row). agent is '' when any_agent.
CREATE TABLE approval_keys (
	approval_seq   INTEGER PRIMARY KEY,
	approval_id    TEXT NOT NULL UNIQUE,
	agent          TEXT NOT NULL,
	any_agent      INTEGER NOT NULL,
	tool_name      TEXT NOT NULL,
	arguments_hash TEXT NOT NULL,
	until_ns       INTEGER NOT NULL
);
CREATE INDEX approval_keys_call ON approval_keys (tool_name, arguments_hash, approval_seq);
-- Budget counts, updated in place: not part of the chain.
CREATE TABLE counters (
	key       TEXT NOT NULL,
	window_ns INTEGER NOT NULL,
	n         INTEGER NOT NULL,
	PRIMARY KEY (key, window_ns)
) WITHOUT ROWID;
-- Finds the event of an approval, an agent or a use by its row: with
-- results, the events table is no longer short.
CREATE INDEX events_rows ON events (tbl, row_seq);
`

// agentAppendOnly are the added tables the triggers guard.
var agentAppendOnly = []string{"agents", "agent_revocations", "results", "approval_keys"}

// agentTablesKey is audit_meta's row saying the added tables are there.
const agentTablesKey = "agent_tables"

// hasAgentTables reports whether the log has the added tables.
func hasAgentTables(ctx context.Context, q querier) (bool, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM audit_meta WHERE key = '`+agentTablesKey+`'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// layoutAgents creates the added tables and their triggers inside tx and
// records that it did.
func layoutAgents(ctx context.Context, tx *sql.Tx) error {
	ddl := agentsDDL
	for _, t := range agentAppendOnly {
		for _, op := range []string{"UPDATE", "DELETE"} {
			ddl += triggerSQL(t, op) + ";\n"
		}
	}
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("create the agent tables: %w", err)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO audit_meta (key, value) VALUES ('`+agentTablesKey+`', '1')`)
	return err
}

// addAgentTables gives a log made before agent identities their tables,
// once, through the write connection (another writer may race: the
// IMMEDIATE transaction makes the second find them).
func addAgentTables(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	has, err := hasAgentTables(ctx, tx)
	if err != nil || has {
		return err
	}
	if err := layoutAgents(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}
