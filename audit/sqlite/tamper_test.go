package sqlite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/sqlite"
)

// tamperLog writes a small history and returns the log's path and head.
// Events: 1 decision (d1), 2 decision (d2), 3 approval of d1, 4 decision
// (d3) that used it, 5 the use, 6 rejection of d2.
func tamperLog(t *testing.T) (string, audit.Head) {
	t.Helper()
	l, _ := newLog(t)
	d1 := record(t, l, pendingDecision("P-db", 1))
	d2 := record(t, l, pendingDecision("P-db", 2))
	a := approveOnce(t, l, d1.ID)
	if err := l.RecordUse(ctx, audittest.UsingDecision(a.ID, 3)); err != nil {
		t.Fatal(err)
	}
	if err := l.Approve(ctx, &audit.Approval{DecisionID: d2.ID, Verdict: audit.Rejected, Approver: "ops", Note: "no"}); err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, l)
	if rep.Events != 6 {
		t.Fatalf("setup wrote %d events", rep.Events)
	}
	path := l.Path()
	l.Close()
	return path, rep.Head
}

// verifyBroken reopens the file read-only and expects Verify to name the
// problem.
func verifyBroken(t *testing.T, path string, head *audit.Head, seq int64, table, what string) {
	t.Helper()
	l, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var rep sqlite.VerifyReport
	if head != nil {
		rep, err = l.VerifyHead(ctx, *head)
	} else {
		rep, err = l.Verify(ctx)
	}
	var brk *sqlite.Break
	if !errors.As(err, &brk) || rep.OK() || rep.Broken != brk {
		t.Fatalf("verify passed an edited log: %+v %v", rep, err)
	}
	if brk.Seq != seq || brk.Table != table || !strings.Contains(brk.What, what) {
		t.Fatalf("verify named %q, want event %d in %s mentioning %q", brk.Error(), seq, table, what)
	}
	t.Logf("verify says: %v", brk)
}

func TestTamperIsDetected(t *testing.T) {
	cases := []struct {
		name    string
		trigger string // dropped first, "" for none
		sql     string
		seq     int64
		table   string
		what    string
	}{
		{"a decision's body", "decision_bodies_no_UPDATE",
			`UPDATE decision_bodies SET bodies = CAST(replace(CAST(bodies AS TEXT), 'psql', 'bash') AS BLOB) WHERE first_event = 2`,
			2, "decisions", "body or its hash was edited"},
		// Turned MAY_ACT, the decision no longer needs its row, so no row
		// is looked up: the hash computed from the body is not the head
		// its decision_bodies row names.
		{"a pending decision's body turned MAY_ACT", "decision_bodies_no_UPDATE",
			`UPDATE decision_bodies SET bodies = CAST(replace(CAST(bodies AS TEXT), 'REQUIRE_CONFIRMATION', 'MAY_ACT') AS BLOB) WHERE first_event = 2`,
			2, "decision_bodies", "not its last decision's hash"},
		{"a decision's hash", "decisions_no_UPDATE", `UPDATE decisions SET hash = zeroblob(32) WHERE seq = 1`, 1, "decisions", "body or its hash was edited"},
		{"a decision's outcome column", "decisions_no_UPDATE", `UPDATE decisions SET outcome = 'DENY' WHERE seq = 3`, 4, "decisions", "outcome"},
		{"a decision's proposition column", "decisions_no_UPDATE", `UPDATE decisions SET proposition_id = 'P-other' WHERE seq = 2`, 2, "decisions", "proposition_id"},
		{"a decision's event", "decisions_no_UPDATE", `UPDATE decisions SET event = 9 WHERE seq = 2`, 2, "decisions", "out of step"},
		{"a deleted decision", "decisions_no_DELETE", `DELETE FROM decisions WHERE seq = 3`, 4, "decisions", "is gone"},
		{"a deleted body", "decision_bodies_no_DELETE", `DELETE FROM decision_bodies WHERE first_event = 2`, 3, "approvals", "event 2 is missing"},
		{"a body added", "decision_bodies_no_UPDATE", `UPDATE decision_bodies SET bodies = bodies || bodies WHERE first_event = 4`, 4, "decision_bodies", "holds 2 bodies but says 1"},
		{"a head", "decision_bodies_no_UPDATE", `UPDATE decision_bodies SET head = zeroblob(32) WHERE first_event = 4`, 4, "decision_bodies", "head"},
		{"an approval's verdict", "approvals_no_UPDATE", `UPDATE approvals SET verdict = 'approved' WHERE seq = 2`, 6, "approvals", "verdict"},
		{"an approval's body", "approvals_no_UPDATE",
			`UPDATE approvals SET body = CAST(replace(CAST(body AS TEXT), '"ops"', '"boss"') AS BLOB) WHERE seq = 1`, 3, "approvals", "body_sha256"},
		{"a deleted approval", "approvals_no_DELETE", `DELETE FROM approvals WHERE seq = 1`, 3, "approvals", "gone"},
		{"a use's decision", "approval_uses_no_UPDATE", `UPDATE approval_uses SET used_by = 'someone-else'`, 5, "approval_uses", "used_by"},
		{"a deleted use (to reuse a once approval)", "approval_uses_no_DELETE", `DELETE FROM approval_uses`, 5, "approval_uses", "gone"},
		{"an event payload", "events_no_UPDATE", `UPDATE events SET payload = replace(payload, 'approved', 'rejected') WHERE seq = 3`, 3, "approvals", "event itself was edited"},
		{"a deleted event", "events_no_DELETE", `DELETE FROM events WHERE seq = 3`, 4, "decisions", "event 3 is missing"},
		{"a dropped trigger alone", "", `DROP TRIGGER approval_uses_no_DELETE`, 0, "approval_uses", "approval_uses_no_DELETE is missing"},
		{"an added trigger", "", `CREATE TRIGGER sneaky AFTER INSERT ON decisions BEGIN SELECT 1; END`, 0, "decisions", "sneaky"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, _ := tamperLog(t)
			db := rawDB(t, path)
			if c.trigger != "" {
				mustExec(t, db, `DROP TRIGGER `+c.trigger)
				// Put it back after the edit, so what is found is the
				// edit, not the missing trigger.
				defer func() {
					mustExec(t, db, triggerSQL(c.trigger))
					db.Close()
					verifyBroken(t, path, nil, c.seq, c.table, c.what)
				}()
			} else {
				defer func() {
					db.Close()
					verifyBroken(t, path, nil, c.seq, c.table, c.what)
				}()
			}
			mustExec(t, db, c.sql)
		})
	}
}

// triggerSQL recreates an append-only trigger as the schema has it.
func triggerSQL(name string) string {
	i := strings.LastIndex(name, "_no_")
	tbl, op := name[:i], name[i+4:]
	return "CREATE TRIGGER " + name + " BEFORE " + op + " ON " + tbl + " BEGIN SELECT RAISE(ABORT, 'EWP_REFUSE_IMMUTABLE_RECORD: the decision log is append-only; " + op + " on " + tbl + " is refused'); END"
}

func TestTriggersRefuseEdits(t *testing.T) {
	path, _ := tamperLog(t)
	db := rawDB(t, path)
	defer db.Close()
	for _, q := range []string{
		`UPDATE decisions SET outcome = 'MAY_ACT'`, `DELETE FROM decisions`,
		`UPDATE decision_bodies SET bodies = ''`, `DELETE FROM decision_bodies`,
		`UPDATE approvals SET verdict = 'approved'`, `DELETE FROM approvals`,
		`DELETE FROM approval_uses`, `UPDATE events SET payload = ''`, `DELETE FROM events`,
		`DELETE FROM audit_meta`,
	} {
		if _, err := db.Exec(q); err == nil || !strings.Contains(err.Error(), "EWP_REFUSE_IMMUTABLE_RECORD") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func TestRowsBehindTheChainAreDetected(t *testing.T) {
	cases := []struct {
		table, sql string
		seq        int64
		broken     string // the table verify names
		what       string
	}{
		{"decisions", `INSERT INTO decisions (seq, event, decision_id, time_ns, outcome, proposition_id, credential, idem_key, approval_id, hash)
			SELECT 99, 7, 'smuggled', time_ns, 'MAY_ACT', proposition_id, credential, NULL, approval_id, hash FROM decisions WHERE seq = 1`,
			0, "decisions", "inserted behind the chain"},
		{"decision_bodies", `INSERT INTO decision_bodies (first_event, first_seq, n, head, bodies) SELECT 99, 99, 1, head, bodies FROM decision_bodies WHERE first_event = 1`,
			// The smuggled body names a decision whose row is elsewhere in
			// the chain.
			99, "decisions", "out of step"},
		{"approvals", `INSERT INTO approvals (seq, approval_id, decision_id, verdict, created_ns, body, body_sha256)
			SELECT 99, 'smuggled', 'd-x', verdict, created_ns, body, body_sha256 FROM approvals WHERE seq = 1`,
			0, "approvals", "not recorded by any event"},
		{"approval_uses", `INSERT INTO approval_uses (seq, approval_id, used_by, used_ns) VALUES (99, 'a-x', 'd-x', 0)`,
			0, "approval_uses", "not recorded by any event"},
	}
	for _, c := range cases {
		t.Run(c.table, func(t *testing.T) {
			path, _ := tamperLog(t)
			db := rawDB(t, path)
			mustExec(t, db, c.sql)
			db.Close()
			verifyBroken(t, path, nil, c.seq, c.broken, c.what)
		})
	}
}

// TestHead: cutting the last entries off (event and row) leaves a chain
// that is consistent from inside; only a head kept from before shows it.
func TestHead(t *testing.T) {
	path, head := tamperLog(t)
	l, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := l.VerifyHead(ctx, head); err != nil || rep.Head != head {
		t.Fatalf("intact log against its own head: %+v %v", rep, err)
	}
	l.Close()

	db := rawDB(t, path)
	for _, trig := range []string{"events_no_DELETE", "approvals_no_DELETE"} {
		mustExec(t, db, `DROP TRIGGER `+trig)
	}
	mustExec(t, db, `DELETE FROM events WHERE seq = 6`)
	mustExec(t, db, `DELETE FROM approvals WHERE seq = 2`)
	for _, trig := range []string{"events_no_DELETE", "approvals_no_DELETE"} {
		mustExec(t, db, triggerSQL(trig))
	}
	db.Close()
	l, err = sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Verify(ctx); err != nil {
		t.Fatalf("a cleanly cut log should pass without a head: %v", err)
	}
	verifyBroken(t, path, &head, 6, "events", "cut off the end")

	// A head whose hash the chain does not hold: rewritten history.
	forged := audit.Head{Seq: 3, Hash: strings.Repeat("0", 64)}
	verifyBroken(t, path, &forged, 3, "approvals", "no longer holds the head")
}
