package postgres_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
	"github.com/ewp-go/ewp/audit/postgres"
)

// tamperDB writes the history (events: 1 decision d1, 2 decision d2,
// 3 approval of d1, 4 decision d4 that used it, 5 the use, 6 keyed
// decision d3, 7 rejection of d2)
// and returns the database's URL and head.
func tamperDB(t *testing.T) (string, audit.Head) {
	t.Helper()
	url := newDB(t)
	l := openLog(t, url, postgres.Options{Now: fixed})
	history(t, l)
	h, err := l.Head(ctx)
	if err != nil || h.Seq != 7 {
		t.Fatalf("setup head %v %v", h, err)
	}
	l.Close()
	return url, h
}

func verifyBroken(t *testing.T, url string, head *audit.Head, seq int64, table, what string) {
	t.Helper()
	l := openLog(t, url, postgres.Options{ReadOnly: true})
	var rep auditchain.VerifyReport
	var err error
	if head != nil {
		rep, err = l.VerifyHead(ctx, *head)
	} else {
		rep, err = l.Verify(ctx)
	}
	var brk *auditchain.Break
	if !errors.As(err, &brk) || rep.OK() || rep.Broken != brk {
		t.Fatalf("verify passed an edited log: %+v %v", rep, err)
	}
	if brk.Seq != seq || brk.Table != table || !strings.Contains(brk.What, what) {
		t.Fatalf("verify named %q, want event %d in %s mentioning %q", brk.Error(), seq, table, what)
	}
	t.Logf("verify says: %v", brk)
}

// TestTamperIsDetected: an owner who disables a trigger, edits and
// enables it again is found by Verify, as is a trigger left disabled,
// dropped, added, or its function replaced.
func TestTamperIsDetected(t *testing.T) {
	cases := []struct {
		name  string
		table string // whose triggers are disabled around sql; "" for none
		sql   string
		seq   int64
		in    string
		what  string
	}{
		{"a decision's body", "decisions",
			`UPDATE ewp_audit.decisions SET body = convert_to(replace(convert_from(body, 'UTF8'), 'REQUIRE_CONFIRMATION', 'MAY_ACT'), 'UTF8') WHERE seq = 2`,
			2, "decisions", "body_sha256 column does not match"},
		{"a decision's outcome column", "decisions", `UPDATE ewp_audit.decisions SET outcome = 'MAY_ACT' WHERE seq = 4`, 6, "decisions", "outcome"},
		{"a deleted decision", "decisions", `DELETE FROM ewp_audit.decisions WHERE seq = 4`, 6, "decisions", "gone"},
		{"an approval's verdict", "approvals", `UPDATE ewp_audit.approvals SET verdict = 'approved' WHERE seq = 2`, 7, "approvals", "verdict"},
		{"a deleted use (to reuse a once approval)", "approval_uses", `DELETE FROM ewp_audit.approval_uses`, 5, "approval_uses", "gone"},
		{"an event payload", "events", `UPDATE ewp_audit.events SET payload = replace(payload, 'P-db', 'P-xx') WHERE seq = 2`, 2, "decisions", "event itself was edited"},
		{"a deleted event", "events", `DELETE FROM ewp_audit.events WHERE seq = 3`, 4, "decisions", "event 3 is missing"},
		{"a truncated use table", "approval_uses", `TRUNCATE ewp_audit.approval_uses`, 5, "approval_uses", "gone"},
		{"a row behind the chain", "", `INSERT INTO ewp_audit.approval_uses (seq, approval_id, used_by, used_ns) VALUES (99, 'a-x', 'd-x', 0)`,
			0, "approval_uses", "not recorded by any event"},
		{"a trigger left disabled", "", `ALTER TABLE ewp_audit.events DISABLE TRIGGER events_no_change`, 0, "events", "disabled"},
		{"a dropped trigger", "", `DROP TRIGGER approval_uses_no_truncate ON ewp_audit.approval_uses`, 0, "approval_uses", "approval_uses_no_truncate is missing"},
		{"an added trigger", "", `CREATE TRIGGER sneaky AFTER INSERT ON ewp_audit.decisions FOR EACH ROW EXECUTE FUNCTION ewp_audit.refuse_change()`, 0, "decisions", "sneaky"},
		{"a disarmed trigger function", "", `CREATE OR REPLACE FUNCTION ewp_audit.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END $$`,
			0, "ewp_audit.refuse_change", "altered"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, _ := tamperDB(t)
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

// TestHead: cutting the last entries off leaves a chain consistent from
// inside; only a head kept from before shows it.
func TestHead(t *testing.T) {
	url, head := tamperDB(t)
	l := openLog(t, url, postgres.Options{ReadOnly: true})
	if rep, err := l.VerifyHead(ctx, head); err != nil || rep.Head != head {
		t.Fatalf("intact log against its own head: %+v %v", rep, err)
	}
	db := connect(t, url)
	for _, tbl := range []string{"events", "approvals"} {
		mustExec(t, db, `ALTER TABLE ewp_audit.`+tbl+` DISABLE TRIGGER USER`)
	}
	mustExec(t, db, `DELETE FROM ewp_audit.events WHERE seq = 7`)
	mustExec(t, db, `DELETE FROM ewp_audit.approvals WHERE seq = 2`)
	for _, tbl := range []string{"events", "approvals"} {
		mustExec(t, db, `ALTER TABLE ewp_audit.`+tbl+` ENABLE TRIGGER USER`)
	}
	if _, err := l.Verify(ctx); err != nil {
		t.Fatalf("a cleanly cut log should pass without a head: %v", err)
	}
	verifyBroken(t, url, &head, 7, "events", "cut off the end")
	forged := audit.Head{Seq: 3, Hash: strings.Repeat("0", 64)}
	verifyBroken(t, url, &forged, 3, "approvals", "no longer holds the head")
}
