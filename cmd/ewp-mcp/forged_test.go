package main

import (
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/fixtures"
)

// TestForgedApprovalsAgainstTheServer: against the real command on an
// SQLite log, as an agent's OS user could (it can write the log file): a
// row inserted straight into approvals, even with a body alice signed, is
// refused as not on the chain; an approval stored through the normal path
// (ewp-audit) with a key the server does not trust is refused as such;
// alice's own, through ewp-audit --key, lifts the decision. Then a trigger
// dropped under the running server stops it recording (so answering), and
// a new server refuses to start on the log; both name ewp-audit verify.
func TestForgedApprovalsAgainstTheServer(t *testing.T) {
	bin := buildAudit(t)
	db := demoLedgerFile(t)
	p := startMCP(t, "--db", db, "--policies", writePolicies(t, string(fixtures.DemoPolicies)), "--operator-keys", keysFile(t))
	protected := deleteOn("P-api-cert-valid", "rm", "protected/report.txt")
	ask := func() string {
		t.Helper()
		r := p.call("may_act", protected)
		id, _ := r.out["decision_id"].(string)
		if r.out["decision"] != "REQUIRE_CONFIRMATION" || id == "" {
			t.Fatalf("want REQUIRE_CONFIRMATION with a decision_id: %+v", r)
		}
		return id
	}
	present := func(approval, want, reason string) {
		t.Helper()
		r := p.call("may_act", with(protected, "approval_id", approval))
		_, why := approvalLayerOf(r.out)
		if r.out["decision"] != want || !strings.HasPrefix(why, reason+":") {
			t.Fatalf("approval %s: want %s with %s, got %v / %q", approval, want, reason, r.out["decision"], why)
		}
	}
	logFile := db + ".audit"
	raw, err := sql.Open("sqlite", "file:"+logFile+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	// (a) A row behind the chain, signed even.
	asked := ask()
	forged := &audit.Approval{DecisionID: asked, Verdict: audit.Approved, Once: true}
	d := &audit.Decision{ID: asked}
	if r := p.call("decision_get", map[string]any{"decision_id": asked}); r.out["decision"] != nil {
		b, _ := json.Marshal(r.out["decision"])
		if err := json.Unmarshal(b, d); err != nil {
			t.Fatal(err)
		}
	}
	audittest.NewOperator("alice").Sign(forged, d, d.Time)
	body, _ := json.Marshal(forged)
	sum := sha256.Sum256(body)
	if _, err := raw.Exec(`INSERT INTO approvals (approval_id, decision_id, verdict, created_ns, body, body_sha256) VALUES (?, ?, ?, ?, ?, ?)`,
		forged.ID, forged.DecisionID, forged.Verdict, forged.CreatedAt.UnixNano(), body, sum[:]); err != nil {
		t.Fatal(err)
	}
	present(forged.ID, "REQUIRE_CONFIRMATION", "APPROVAL_NOT_ON_CHAIN")

	// (b) A well-formed chain entry from a process without a trusted key.
	unknown := approvalID(t, operator(t, bin, db, "approve", ask(), "--once", "--key", opKey(t, "mallory"), "--json"))
	present(unknown, "REQUIRE_CONFIRMATION", "APPROVAL_UNKNOWN_KEY")
	good := approvalID(t, operator(t, bin, db, "approve", ask(), "--once", "--key", opKey(t, "alice"), "--json"))
	present(good, "MAY_ACT", "APPROVED")

	// (d) A trigger dropped under the running server: it stops recording.
	if _, err := raw.Exec(`DROP TRIGGER approvals_no_UPDATE`); err != nil {
		t.Fatal(err)
	}
	r := p.call("may_act", protected)
	if r.out["decision"] != nil || r.code == "" {
		t.Fatalf("a server answered from a log without its triggers: %+v", r)
	}
	// The server logs the failure beside its answer, perhaps just after.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		log := p.errb.String()
		if strings.Contains(log, "trigger approvals_no_UPDATE is missing") && strings.Contains(log, "ewp-audit verify") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's log does not say why it stopped: %s", log)
		}
	}
	// And a new one does not start.
	res := runWith(t, []string{"--db", db, "--audit", logFile}, env(), "")
	if res.code == 0 || !strings.Contains(res.stderr, "ewp-audit verify") || !strings.Contains(res.stderr, "approvals_no_UPDATE") {
		t.Fatalf("a server started on a log without its triggers: %d %s", res.code, res.stderr)
	}
}
