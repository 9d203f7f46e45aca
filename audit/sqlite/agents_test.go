package sqlite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/sqlite"
)

// agentLog writes an agent, its revocation, a second agent, a decision,
// its result and a once approval of a tool call. Events: 1 agent
// builder, 2 its revocation, 3 agent alpha, 4 decision, 5 result, 6
// approval.
func agentLog(t *testing.T) (path, cred string) {
	t.Helper()
	l, _ := newLog(t)
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
	d := pendingDecision("P-db", 1)
	d.Agent = "alpha"
	record(t, l, d)
	if err := l.RecordResult(ctx, &audit.Result{DecisionID: d.ID, Status: audit.ResultOK}); err != nil {
		t.Fatal(err)
	}
	approveOnce(t, l, d.ID)
	if rep := mustVerify(t, l); rep.Events != 6 || rep.Agents != 2 || rep.Revocations != 1 || rep.Results != 1 {
		t.Fatalf("setup: %+v", rep)
	}
	path = l.Path()
	l.Close()
	return path, cred
}

func TestAgentTablesTamper(t *testing.T) {
	cases := []struct {
		name, trigger, sql string
		seq                int64
		table, what        string
	}{
		{"an agent's groups", "agents_no_UPDATE", `UPDATE agents SET body = CAST(replace(CAST(body AS TEXT), '"ci"', '"admin"') AS BLOB) WHERE seq = 1`,
			1, "agents", "agent's JSON was edited"},
		{"an agent's credential", "agents_no_UPDATE", `UPDATE agents SET credential_sha256 = '` + strings.Repeat("0", 64) + `' WHERE seq = 2`,
			3, "agents", "credential_sha256"},
		{"a deleted revocation", "agent_revocations_no_DELETE", `DELETE FROM agent_revocations`, 2, "agent_revocations", "is gone"},
		{"a result's status", "results_no_UPDATE", `UPDATE results SET status = 'failed'`, 5, "results", "status"},
		{"a deleted once key", "approval_keys_no_DELETE", `DELETE FROM approval_keys`, 0, "approval_keys", "has no key"},
		{"a widened once key", "approval_keys_no_UPDATE", `UPDATE approval_keys SET any_agent = 1, agent = ''`, 0, "approval_keys", "edited"},
		{"a dropped agents trigger", "", `DROP TRIGGER agents_no_DELETE`, 0, "agents", "agents_no_DELETE is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, _ := agentLog(t)
			db := rawDB(t, path)
			if c.trigger != "" {
				mustExec(t, db, `DROP TRIGGER `+c.trigger)
			}
			mustExec(t, db, c.sql)
			if c.trigger != "" {
				mustExec(t, db, triggerSQL(c.trigger))
			}
			db.Close()
			verifyBroken(t, path, nil, c.seq, c.table, c.what)
		})
	}
}

func TestAgentTablesRefuseEdits(t *testing.T) {
	path, _ := agentLog(t)
	db := rawDB(t, path)
	defer db.Close()
	for _, q := range []string{
		`UPDATE agents SET name = 'x'`, `DELETE FROM agents`, `DELETE FROM agent_revocations`,
		`UPDATE results SET status = 'ok'`, `DELETE FROM results`, `DELETE FROM approval_keys`,
	} {
		if _, err := db.Exec(q); err == nil || !strings.Contains(err.Error(), "EWP_REFUSE_IMMUTABLE_RECORD") {
			t.Errorf("%s: %v", q, err)
		}
	}
	// Counters are mutable state, outside the chain.
	mustExec(t, db, `INSERT INTO counters (key, window_ns, n) VALUES ('k', 0, 1)`)
	mustExec(t, db, `UPDATE counters SET n = 2`)
}

// TestDeletedRevocationStillHolds: a revocation row deleted behind the
// chain (triggers dropped) does not bring the credential back, because
// its chain event still records it.
func TestDeletedRevocationStillHolds(t *testing.T) {
	l, _ := newLog(t)
	r, cred := audittest.NewAgent(t, "builder")
	if err := l.AddAgent(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := l.RevokeAgent(ctx, "builder", audittest.T0); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, l.Path())
	mustExec(t, db, `DROP TRIGGER agent_revocations_no_DELETE`)
	mustExec(t, db, `DELETE FROM agent_revocations`)
	db.Close()
	if _, err := l.AgentByCredential(ctx, audit.CredentialSHA256(cred)); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("a revocation deleted behind the chain: %v", err)
	}
}

// TestAgentInsertedBehindTheChain: an agent row no event records names
// nobody.
func TestAgentInsertedBehindTheChain(t *testing.T) {
	path, _ := agentLog(t)
	db := rawDB(t, path)
	forged := audit.CredentialSHA256("ewp_agent_forged")
	mustExec(t, db, `INSERT INTO agents (seq, name, credential_sha256, created_ns, body, body_sha256)
		SELECT 99, 'mallory', '`+forged+`', created_ns, body, body_sha256 FROM agents WHERE seq = 2`)
	db.Close()
	l, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.AgentByCredential(ctx, forged); !errors.Is(err, sqlite.ErrBrokenLog) {
		t.Fatalf("an agent inserted behind the chain: %v", err)
	}
	verifyBroken(t, path, nil, 0, "agents", "not recorded by any event")
}

// TestAgentsAndCountersSurviveReopen: agents, results and counts are in
// the file, not the process.
func TestAgentsAndCountersSurviveReopen(t *testing.T) {
	path, cred := agentLog(t)
	for i, want := range []int64{1, 2} {
		l, err := sqlite.Open(path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := l.Add(ctx, "agent:alpha:calls", audittest.T0, 1); err != nil || got != want {
			t.Fatalf("open %d: count %d %v, want %d", i, got, err, want)
		}
		if r, err := l.AgentByCredential(ctx, audit.CredentialSHA256(cred)); err != nil || r.Name != "alpha" {
			t.Fatalf("open %d: %+v %v", i, r, err)
		}
		l.Close()
	}
}

// TestLogBeforeAgentTables: a schema-3 log made before agent identities
// (no agent tables, no audit_meta row for them) verifies read-only as it
// did, and its first writer adds the tables, after which it verifies and
// takes agents; its chain is unchanged.
func TestLogBeforeAgentTables(t *testing.T) {
	l, _ := newLog(t)
	record(t, l, pendingDecision("P-db", 1))
	before := mustVerify(t, l)
	l.Close()
	db := rawDB(t, l.Path())
	for _, tbl := range []string{"agents", "agent_revocations", "results", "approval_keys", "counters"} {
		mustExec(t, db, `DROP TABLE `+tbl) // drops its triggers too
	}
	mustExec(t, db, `DROP INDEX events_rows`)
	mustExec(t, db, `DROP TRIGGER audit_meta_no_DELETE`)
	mustExec(t, db, `DELETE FROM audit_meta WHERE key = 'agent_tables'`)
	mustExec(t, db, triggerSQL("audit_meta_no_DELETE"))
	db.Close()

	ro, err := sqlite.Open(l.Path(), sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, ro); rep.Head != before.Head {
		t.Fatalf("head %v, was %v", rep.Head, before.Head)
	}
	ro.Close()
	w, err := sqlite.Open(l.Path(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, _ := audittest.NewAgent(t, "builder")
	if err := w.AddAgent(ctx, r); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, w); rep.Agents != 1 || rep.Events != before.Events+1 {
		t.Fatalf("after the upgrade: %+v", rep)
	}
}
