package sqlite_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/sqlite"
)

// TestApprovalBehindTheChainIsRefused: an approvals row inserted straight
// into the file (by anyone who can write it: on stdio, the agent's OS
// user), even with a body an operator signed, is refused by the read the
// gate makes, naming why; so is an approval whose body was edited after
// its event recorded it.
func TestApprovalBehindTheChainIsRefused(t *testing.T) {
	l, _ := newLog(t)
	d := record(t, l, pendingDecision("P-db", 1))
	forged := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Once: true}
	audittest.NewOperator("alice").Sign(forged, d, t0)
	body, sum := approvalBody(t, forged)
	db := rawDB(t, l.Path())
	defer db.Close()
	mustExec(t, db, `INSERT INTO approvals (approval_id, decision_id, verdict, created_ns, body, body_sha256) VALUES (?, ?, ?, ?, ?, ?)`,
		forged.ID, forged.DecisionID, forged.Verdict, forged.CreatedAt.UnixNano(), body, sum)
	_, err := l.Approval(ctx, forged.ID)
	if !errors.Is(err, audit.ErrApprovalNotOnChain) || audit.CodeOf(err) != audit.CodeApprovalNotOnChain || !strings.Contains(err.Error(), "ewp-audit verify") {
		t.Fatalf("an approval behind the chain: %v", err)
	}

	d2 := record(t, l, pendingDecision("P-db", 2))
	a := approveOnce(t, l, d2.ID)
	if _, err := l.Approval(ctx, a.ID); err != nil {
		t.Fatalf("an approval on the chain: %v", err)
	}
	mustExec(t, db, `DROP TRIGGER approvals_no_UPDATE`)
	mustExec(t, db, `UPDATE approvals SET body = CAST(replace(CAST(body AS TEXT), '"once":true', '"once":false') AS BLOB) WHERE approval_id = ?`, a.ID)
	mustExec(t, db, triggerSQL("approvals_no_UPDATE"))
	if _, err := l.Approval(ctx, a.ID); !errors.Is(err, audit.ErrApprovalNotOnChain) || !strings.Contains(err.Error(), "body_sha256") {
		t.Fatalf("an approval edited after it was recorded: %v", err)
	}
}

func approvalBody(t *testing.T, a *audit.Approval) ([]byte, []byte) {
	t.Helper()
	body, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	return body, sum[:]
}

// TestWriterStopsOnDroppedTrigger: a trigger dropped by another process
// while the log is open stops the next commit, with the reason and
// `ewp-audit verify`; put back, commits go on.
func TestWriterStopsOnDroppedTrigger(t *testing.T) {
	l, _ := newLog(t)
	record(t, l, pendingDecision("P-db", 1))
	db := rawDB(t, l.Path())
	defer db.Close()
	mustExec(t, db, `DROP TRIGGER decision_bodies_no_UPDATE`)
	err := l.Record(ctx, pendingDecision("P-db", 2))
	if !errors.Is(err, sqlite.ErrBrokenLog) || !strings.Contains(err.Error(), "ewp-audit verify") || !strings.Contains(err.Error(), "decision_bodies_no_UPDATE") {
		t.Fatalf("a writer appended to a log without its triggers: %v", err)
	}
	if err := l.Approve(ctx, &audit.Approval{DecisionID: "x", Verdict: audit.Approved, Once: true, Approver: "a"}); !errors.Is(err, sqlite.ErrBrokenLog) {
		t.Fatalf("an approval appended to a log without its triggers: %v", err)
	}
	mustExec(t, db, triggerSQL("decision_bodies_no_UPDATE"))
	record(t, l, pendingDecision("P-db", 3))
	mustVerify(t, l)
}

// TestOpenRefusesBrokenLog: the server (and ewp-audit approve) will not
// open for writing a log whose triggers are gone, or whose newest body,
// decision or approval, was edited; read-only, for verify, it still opens.
func TestOpenRefusesBrokenLog(t *testing.T) {
	cases := []struct{ name, trigger, sql, what string }{
		{"a dropped trigger", "", `DROP TRIGGER events_no_DELETE`, "events_no_DELETE is missing"},
		{"the newest decision's body edited", "decision_bodies_no_UPDATE",
			`UPDATE decision_bodies SET bodies = CAST(replace(CAST(bodies AS TEXT), 'psql', 'bash') AS BLOB) WHERE first_event = (SELECT max(first_event) FROM decision_bodies)`,
			"a body was edited"},
		{"the newest approval's body edited", "approvals_no_UPDATE",
			`UPDATE approvals SET body = CAST(replace(CAST(body AS TEXT), '"ops"', '"boss"') AS BLOB) WHERE seq = 2`, "body_sha256"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, _ := tamperLog(t)
			db := rawDB(t, path)
			if c.trigger != "" {
				mustExec(t, db, `DROP TRIGGER `+c.trigger)
			}
			mustExec(t, db, c.sql)
			if c.trigger != "" {
				mustExec(t, db, triggerSQL(c.trigger))
			}
			db.Close()
			_, err := sqlite.Open(path, sqlite.Options{})
			if !errors.Is(err, sqlite.ErrBrokenLog) || !strings.Contains(err.Error(), "ewp-audit verify") || !strings.Contains(err.Error(), c.what) {
				t.Fatalf("opened a broken log for writing: %v", err)
			}
			ro, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("read-only, for verify: %v", err)
			}
			ro.Close()
		})
	}
}

// TestFailedOpenLeaksNothing: an open that fails after the reader pool
// was made (a file that is not an SQLite database) closes it: each
// *sql.DB left open keeps a goroutine (and its connections) for good, so
// a server retrying would leak them.
func TestFailedOpenLeaksNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "not-a-log.audit")
	if err := os.WriteFile(path, bytes.Repeat([]byte("not a database "), 512), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(path, sqlite.Options{}); err == nil {
		t.Fatal("opened a file that is not a database")
	}
	before := runtime.NumGoroutine()
	for range 20 {
		if _, err := sqlite.Open(path, sqlite.Options{}); err == nil {
			t.Fatal("opened a file that is not a database")
		}
	}
	time.Sleep(50 * time.Millisecond) // let closed pools' goroutines end
	if after := runtime.NumGoroutine(); after > before+2 {
		t.Fatalf("20 failed opens left %d goroutines running (a *sql.DB each)", after-before)
	}
}

// TestDeletedUseDoesNotFreeAnApproval: a once approval's use row deleted
// behind the chain (triggers dropped and put back) does not make the
// approval usable again: the chain still records the use.
func TestDeletedUseDoesNotFreeAnApproval(t *testing.T) {
	l, _ := newLog(t)
	d := record(t, l, pendingDecision("P-db", 1))
	a := approveOnce(t, l, d.ID)
	if err := l.RecordUse(ctx, audittest.UsingDecision(a.ID, 10)); err != nil {
		t.Fatal(err)
	}
	approveOnce(t, l, record(t, l, pendingDecision("P-db", 2)).ID) // the use is not the last event
	db := rawDB(t, l.Path())
	defer db.Close()
	mustExec(t, db, `DROP TRIGGER approval_uses_no_DELETE`)
	mustExec(t, db, `DELETE FROM approval_uses`)
	mustExec(t, db, triggerSQL("approval_uses_no_DELETE"))
	err := l.RecordUse(ctx, audittest.UsingDecision(a.ID, 11))
	if !errors.Is(err, audit.ErrApprovalNotOnChain) || !strings.Contains(err.Error(), "approval_uses row is gone") {
		t.Fatalf("a once approval used again after its use row was deleted: %v", err)
	}
}
