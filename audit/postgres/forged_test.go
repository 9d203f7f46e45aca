package postgres_test

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/postgres"
)

// TestApprovalBehindTheChainIsRefused: an approvals row inserted by a role
// that may (the owner; the replicas' ewp_server may not at all, see
// TestRoles), even with a body an operator signed, is refused by the read
// the gate makes, naming why.
func TestApprovalBehindTheChainIsRefused(t *testing.T) {
	url := newDB(t)
	l := openLog(t, url, postgres.Options{})
	d := audittest.PendingDecision("P-db", 1)
	if err := l.Record(ctx, d); err != nil {
		t.Fatal(err)
	}
	forged := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Once: true}
	audittest.NewOperator("alice").Sign(forged, d, audittest.T0)
	body, err := json.Marshal(forged)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	mustExec(t, connect(t, url), `INSERT INTO ewp_audit.approvals (approval_id, decision_id, verdict, created_ns, body, body_sha256) VALUES ($1, $2, $3, $4, $5, $6)`,
		[]byte(forged.ID), []byte(forged.DecisionID), forged.Verdict, forged.CreatedAt.UnixNano(), body, sum[:])
	_, err = l.Approval(ctx, forged.ID)
	if !errors.Is(err, audit.ErrApprovalNotOnChain) || !strings.Contains(err.Error(), "ewp-audit verify") {
		t.Fatalf("an approval behind the chain: %v", err)
	}
}

// TestWriterStopsOnBrokenGuards: a trigger dropped or disabled, or the
// newest decision's body edited, stops the next commit of a running
// writer, and a new writer does not open; put back, writes go on.
func TestWriterStopsOnBrokenGuards(t *testing.T) {
	cases := []struct{ name, breakSQL, mendSQL, what string }{
		{"a dropped trigger", `DROP TRIGGER events_no_change ON ewp_audit.events`,
			`CREATE TRIGGER events_no_change BEFORE DELETE OR UPDATE ON ewp_audit.events FOR EACH ROW EXECUTE FUNCTION ewp_audit.refuse_change()`,
			"triggers are missing, disabled or altered"},
		{"a disabled trigger", `ALTER TABLE ewp_audit.approvals DISABLE TRIGGER approvals_no_change`,
			`ALTER TABLE ewp_audit.approvals ENABLE TRIGGER approvals_no_change`, "triggers are missing, disabled or altered"},
		{"the newest body edited", `ALTER TABLE ewp_audit.decisions DISABLE TRIGGER decisions_no_change;
			UPDATE ewp_audit.decisions SET body = convert_to(replace(convert_from(body, 'UTF8'), 'psql', 'bash'), 'UTF8') WHERE seq = (SELECT max(seq) FROM ewp_audit.decisions);
			ALTER TABLE ewp_audit.decisions ENABLE TRIGGER decisions_no_change`, "", "body_sha256"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := newDB(t)
			l := openLog(t, url, postgres.Options{})
			if err := l.Record(ctx, audittest.PendingDecision("P-db", 1)); err != nil {
				t.Fatal(err)
			}
			admin := connect(t, url)
			mustExec(t, admin, c.breakSQL)
			err := l.Record(ctx, audittest.PendingDecision("P-db", 2))
			if !errors.Is(err, postgres.ErrBrokenLog) || !strings.Contains(err.Error(), "ewp-audit verify") || !strings.Contains(err.Error(), c.what) {
				t.Fatalf("a running writer appended to a broken log: %v", err)
			}
			if _, err := postgres.Open(ctx, url, postgres.Options{}); !errors.Is(err, postgres.ErrBrokenLog) {
				t.Fatalf("a new writer opened a broken log: %v", err)
			}
			if c.mendSQL == "" {
				return
			}
			mustExec(t, admin, c.mendSQL)
			if err := l.Record(ctx, audittest.PendingDecision("P-db", 3)); err != nil {
				t.Fatalf("after the trigger is back: %v", err)
			}
		})
	}
}

// TestDeletedUseDoesNotFreeAnApproval: a once approval's use row deleted
// by the owner with the trigger disabled does not make the approval
// usable again: the chain still records the use.
func TestDeletedUseDoesNotFreeAnApproval(t *testing.T) {
	url := newDB(t)
	l := openLog(t, url, postgres.Options{})
	d := audittest.PendingDecision("P-db", 1)
	if err := l.Record(ctx, d); err != nil {
		t.Fatal(err)
	}
	a := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Once: true, Approver: "ops"}
	if err := l.Approve(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordUse(ctx, audittest.UsingDecision(a.ID, 10)); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(ctx, audittest.PendingDecision("P-db", 2)); err != nil { // the use is not the last event
		t.Fatal(err)
	}
	mustExec(t, connect(t, url), `ALTER TABLE ewp_audit.approval_uses DISABLE TRIGGER approval_uses_no_change;
		DELETE FROM ewp_audit.approval_uses;
		ALTER TABLE ewp_audit.approval_uses ENABLE TRIGGER approval_uses_no_change`)
	err := l.RecordUse(ctx, audittest.UsingDecision(a.ID, 11))
	if !errors.Is(err, audit.ErrApprovalNotOnChain) || !strings.Contains(err.Error(), "approval_uses row is gone") {
		t.Fatalf("a once approval used again after its use row was deleted: %v", err)
	}
}
