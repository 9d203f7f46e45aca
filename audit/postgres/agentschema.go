package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The tables of agent identities, results, once-approval keys and
// budget counters, as on SQLite (audit/sqlite agentschema.go): Init
// creates them in a new log and adds them to one made before them,
// recording audit_meta's 'agent_tables'; a writer refuses to open a log
// without them (ErrNoAgentTables, naming Init), Verify expects their
// triggers exactly when that row is there. agents, agent_revocations
// and results are chained; approval_keys is derived from the chained
// approvals; the four are append-only. counters is mutable, outside the
// chain, and the only table the server role may UPDATE.
const agentsDDL = `
CREATE TABLE ewp_audit.agents (
	seq               bigint PRIMARY KEY,
	name              text NOT NULL UNIQUE,
	credential_sha256 text NOT NULL UNIQUE,
	created_ns        bigint NOT NULL,
	body              bytea NOT NULL,
	body_sha256       bytea NOT NULL
);
CREATE TABLE ewp_audit.agent_revocations (
	seq        bigint PRIMARY KEY,
	name       text NOT NULL UNIQUE,
	revoked_ns bigint NOT NULL
);
CREATE TABLE ewp_audit.results (
	seq         bigint PRIMARY KEY,
	decision_id bytea NOT NULL,
	status      text NOT NULL,
	time_ns     bigint NOT NULL,
	body        bytea NOT NULL,
	body_sha256 bytea NOT NULL
);
CREATE INDEX results_decision ON ewp_audit.results (decision_id, seq);
CREATE TABLE ewp_audit.approval_keys (
	approval_seq   bigint PRIMARY KEY,
	approval_id    bytea NOT NULL UNIQUE,
	agent          bytea NOT NULL,
	any_agent      boolean NOT NULL,
	tool_name      bytea NOT NULL,
	arguments_hash bytea NOT NULL,
	until_ns       bigint NOT NULL
);
CREATE INDEX approval_keys_call ON ewp_audit.approval_keys (tool_name, arguments_hash, approval_seq);
CREATE TABLE ewp_audit.counters (
	key       bytea NOT NULL,
	window_ns bigint NOT NULL,
	n         bigint NOT NULL,
	PRIMARY KEY (key, window_ns)
);
`

// agentAppendOnly are the added tables the triggers guard.
var agentAppendOnly = []string{"agents", "agent_revocations", "results", "approval_keys"}

const agentTablesKey = "agent_tables"

// ErrNoAgentTables is wrapped by Open's error for a writer on a log made
// before agent identities, which Init has not yet extended.
var ErrNoAgentTables = errors.New("the decision log has no agent tables")

// hasAgentTables reports whether the log has the added tables.
func hasAgentTables(ctx context.Context, q queryRower) (bool, error) {
	var v string
	err := q.QueryRow(ctx, `SELECT value FROM ewp_audit.audit_meta WHERE key = '`+agentTablesKey+`'`).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// addAgentTables creates the added tables and their triggers in tx
// (Init, holding its lock) when the log has none.
func addAgentTables(ctx context.Context, tx pgx.Tx) error {
	has, err := hasAgentTables(ctx, tx)
	if err != nil || has {
		return err
	}
	ddl := agentsDDL
	for _, t := range agentAppendOnly {
		ddl += triggerDef(t, "_no_change") + ";\n" + triggerDef(t, "_no_truncate") + ";\n"
	}
	if _, err := tx.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("decision log init: create the agent tables: %w", err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO ewp_audit.audit_meta (key, value) VALUES ('`+agentTablesKey+`', '1')`)
	return err
}

// requireAgentTables refuses a writer on a log without the added tables.
func requireAgentTables(ctx context.Context, q queryRower) error {
	has, err := hasAgentTables(ctx, q)
	switch {
	case err != nil:
		return err
	case !has:
		return fmt.Errorf("%w (agents, agent_revocations, results, approval_keys, counters); add them with `ewp-ingest init --db URL` (audit/postgres.Init), as the database's owner", ErrNoAgentTables)
	}
	return nil
}
