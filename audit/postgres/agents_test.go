package postgres_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/internal/pgtest"
)

// agentDB writes, as the SQLite test does: 1 agent builder, 2 its
// revocation, 3 agent alpha, 4 decision, 5 its result, 6 an approval.
func agentDB(t *testing.T) (url, cred string) {
	t.Helper()
	url = newDB(t)
	l := openLog(t, url, postgres.Options{Now: fixed})
	r, _ := audittest.NewAgent(t, "builder", "ci")
	if err := l.AddAgent(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := l.RevokeAgent(ctx, "builder", audittest.T0); err != nil {
		t.Fatal(err)
	}
	a, cred := audittest.NewAgent(t, "alpha")
	if err := l.AddAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	d := audittest.PendingDecision("P-db", 1)
	d.Agent = "alpha"
	if err := l.Record(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordResult(ctx, &audit.Result{DecisionID: d.ID, Status: audit.ResultOK}); err != nil {
		t.Fatal(err)
	}
	if err := l.Approve(ctx, &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Approver: "ops", Once: true}); err != nil {
		t.Fatal(err)
	}
	if rep := audittest.MustVerify(t, l); rep.Events != 6 || rep.Agents != 2 || rep.Revocations != 1 || rep.Results != 1 {
		t.Fatalf("setup: %+v", rep)
	}
	l.Close()
	return url, cred
}

func TestAgentTablesTamper(t *testing.T) {
	cases := []struct {
		name, table, sql string
		seq              int64
		in, what         string
	}{
		{"an agent's groups", "agents",
			`UPDATE ewp_audit.agents SET body = convert_to(replace(convert_from(body, 'UTF8'), '"ci"', '"admin"'), 'UTF8') WHERE seq = 1`,
			1, "agents", "agent's JSON was edited"},
		{"an agent's credential", "agents", `UPDATE ewp_audit.agents SET credential_sha256 = repeat('0', 64) WHERE seq = 2`, 3, "agents", "credential_sha256"},
		{"a deleted revocation", "agent_revocations", `DELETE FROM ewp_audit.agent_revocations`, 2, "agent_revocations", "is gone"},
		{"a result's status", "results", `UPDATE ewp_audit.results SET status = 'failed'`, 5, "results", "status"},
		{"a deleted once key", "approval_keys", `DELETE FROM ewp_audit.approval_keys`, 0, "approval_keys", "has no key"},
		{"a widened once key", "approval_keys", `UPDATE ewp_audit.approval_keys SET any_agent = true, agent = ''::bytea`, 0, "approval_keys", "edited"},
		{"a dropped agents trigger", "", `DROP TRIGGER agents_no_change ON ewp_audit.agents`, 0, "agents", "agents_no_change is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, _ := agentDB(t)
			db := connect(t, url)
			if c.table != "" {
				mustExec(t, db, `ALTER TABLE ewp_audit.`+c.table+` DISABLE TRIGGER USER`)
			}
			mustExec(t, db, c.sql)
			if c.table != "" {
				mustExec(t, db, `ALTER TABLE ewp_audit.`+c.table+` ENABLE TRIGGER USER`)
			}
			verifyBroken(t, url, nil, c.seq, c.in, c.what)
		})
	}
}

// TestAgentRoles: ewp_server reads agents, records results and counts,
// but neither adds nor revokes an agent nor writes approval keys; only
// ewp_operator adds and revokes; the owner cannot edit the chained
// agent tables (triggers), while counters are mutable.
func TestAgentRoles(t *testing.T) {
	url, cred := agentDB(t)
	admin := connect(t, url)
	for _, q := range []string{
		`DO $$ BEGIN CREATE ROLE audit_test_mcp LOGIN IN ROLE ewp_server; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
		`DO $$ BEGIN CREATE ROLE audit_test_op LOGIN IN ROLE ewp_operator; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
	} {
		mustExec(t, admin, q)
	}
	server := openLog(t, pgtest.WithUser(url, "audit_test_mcp"), postgres.Options{})
	op := openLog(t, pgtest.WithUser(url, "audit_test_op"), postgres.Options{})
	if r, err := server.AgentByCredential(ctx, audit.CredentialSHA256(cred)); err != nil || r.Name != "alpha" {
		t.Fatalf("the server role reads agents: %+v %v", r, err)
	}
	if n, err := server.Add(ctx, "agent:alpha:calls", audittest.T0, 1); err != nil || n != 1 {
		t.Fatalf("the server role counts: %d %v", n, err)
	}
	d := audittest.PendingDecision("P-db", 2)
	if err := server.Record(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := server.RecordResult(ctx, &audit.Result{DecisionID: d.ID, Status: audit.ResultToolError}); err != nil {
		t.Fatalf("the server role records a result: %v", err)
	}
	r, _ := audittest.NewAgent(t, "mallory")
	if err := server.AddAgent(ctx, r); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("the server role added an agent: %v", err)
	}
	if err := server.RevokeAgent(ctx, "alpha", audittest.T0); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("the server role revoked an agent: %v", err)
	}
	if err := server.Approve(ctx, &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Approver: "x", Once: true}); err == nil {
		t.Fatal("the server role stored an approval")
	}
	r2, _ := audittest.NewAgent(t, "gamma")
	if err := op.AddAgent(ctx, r2); err != nil {
		t.Fatalf("the operator role adds an agent: %v", err)
	}
	if err := op.RevokeAgent(ctx, "alpha", audittest.T0); err != nil {
		t.Fatalf("the operator role revokes: %v", err)
	}
	if _, err := server.AgentByCredential(ctx, audit.CredentialSHA256(cred)); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("a revoked agent on the next lookup: %v", err)
	}
	if err := op.Approve(ctx, &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Approver: "ops", Once: true}); err != nil {
		t.Fatalf("the operator role approves (with its key row): %v", err)
	}
	audittest.MustVerify(t, server)
	for _, q := range []string{
		`UPDATE ewp_audit.agents SET name = 'x'`, `DELETE FROM ewp_audit.agent_revocations`, `TRUNCATE ewp_audit.results`,
		`DELETE FROM ewp_audit.approval_keys`,
	} {
		if _, err := admin.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "EWP_REFUSE_IMMUTABLE_RECORD") {
			t.Errorf("the owner ran %s: %v", q, err)
		}
	}
	mustExec(t, admin, `UPDATE ewp_audit.counters SET n = n + 1`)
}

// TestCountersSurviveReopen: the count is in the database.
func TestCountersSurviveReopen(t *testing.T) {
	url := newDB(t)
	for i, want := range []int64{3, 6} {
		l := openLog(t, url, postgres.Options{})
		if n, err := l.Add(ctx, "agent:a:calls", audittest.T0, 3); err != nil || n != want {
			t.Fatalf("open %d: %d %v, want %d", i, n, err, want)
		}
		l.Close()
	}
}

// TestInitAddsAgentTables: a log made before agent identities refuses a
// writer (naming Init), verifies read-only, and after Init takes agents.
func TestInitAddsAgentTables(t *testing.T) {
	url := newDB(t)
	db := connect(t, url)
	for _, q := range []string{
		`DROP TABLE ewp_audit.agents, ewp_audit.agent_revocations, ewp_audit.results, ewp_audit.approval_keys, ewp_audit.counters`,
		`ALTER TABLE ewp_audit.audit_meta DISABLE TRIGGER USER`,
		`DELETE FROM ewp_audit.audit_meta WHERE key = 'agent_tables'`,
		`ALTER TABLE ewp_audit.audit_meta ENABLE TRIGGER USER`,
	} {
		mustExec(t, db, q)
	}
	if _, err := postgres.Open(ctx, url, postgres.Options{}); !errors.Is(err, postgres.ErrNoAgentTables) || !strings.Contains(err.Error(), "ewp-ingest init") {
		t.Fatalf("a writer on a log without agent tables: %v", err)
	}
	audittest.MustVerify(t, openLog(t, url, postgres.Options{ReadOnly: true}))
	if err := postgres.Init(ctx, url, ""); err != nil {
		t.Fatal(err)
	}
	l := openLog(t, url, postgres.Options{})
	r, _ := audittest.NewAgent(t, "builder")
	if err := l.AddAgent(ctx, r); err != nil {
		t.Fatal(err)
	}
	audittest.MustVerify(t, l)
}

// TestDeletedRevocationStillHolds: a revocation row deleted behind the
// chain (its triggers disabled by the owner) does not bring the
// credential back: its chain event still records it.
func TestDeletedRevocationStillHolds(t *testing.T) {
	url, _ := agentDB(t)
	l := openLog(t, url, postgres.Options{})
	r, cred := audittest.NewAgent(t, "gamma")
	if err := l.AddAgent(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := l.RevokeAgent(ctx, "gamma", audittest.T0); err != nil {
		t.Fatal(err)
	}
	db := connect(t, url)
	mustExec(t, db, `ALTER TABLE ewp_audit.agent_revocations DISABLE TRIGGER USER`)
	mustExec(t, db, `DELETE FROM ewp_audit.agent_revocations WHERE name = 'gamma'`)
	mustExec(t, db, `ALTER TABLE ewp_audit.agent_revocations ENABLE TRIGGER USER`)
	if _, err := l.AgentByCredential(ctx, audit.CredentialSHA256(cred)); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("a revocation deleted behind the chain: %v", err)
	}
}
