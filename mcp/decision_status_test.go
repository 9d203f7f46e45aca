package mcp

import (
	"context"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/warrant"
)

// decision_get tells an agent waiting on a REQUIRE_CONFIRMATION where its
// call stands: pending, approved (with the approval_id to present),
// rejected, expired once the approval lapsed, unverified for an answer no
// trusted key signed; a decision that asked for nothing has no status.
func TestDecisionGetStatus(t *testing.T) {
	now := testNow
	clock := func() time.Time { return now }
	ml := memlog.New(clock)
	srv, _ := newTestServer(t, WithDecisionLog(testLog(ml)), WithClock(clock))
	c := dialInProcess(t, srv)
	ask := func() string {
		t.Helper()
		out := mustOK(t, call(t, c, "may_act", confirmArgs()))
		if out["decision"] != string(warrant.RequireConfirmation) {
			t.Fatalf("want REQUIRE_CONFIRMATION: %v", out)
		}
		return decisionID(t, out)
	}
	status := func(id string) (string, any) {
		t.Helper()
		rec := mustOK(t, call(t, c, "decision_get", obj{"decision_id": id}))
		s, _ := rec["status"].(string)
		return s, rec["approval_id"]
	}

	pending, approved, rejected, lapsing, unsigned := ask(), ask(), ask(), ask(), ask()
	if s, ap := status(pending); s != StatusPending || ap != nil {
		t.Errorf("unanswered: %q %v", s, ap)
	}
	apID := approve(t, ml, audit.Approval{DecisionID: approved, Once: true})
	approve(t, ml, audit.Approval{DecisionID: rejected, Verdict: audit.Rejected, Note: "no"})
	approve(t, ml, audit.Approval{DecisionID: lapsing, Once: true, Until: now.Add(time.Hour)})
	if err := ml.Approve(context.Background(), &audit.Approval{DecisionID: unsigned, Verdict: audit.Approved, Approver: "mallory", Once: true}); err != nil {
		t.Fatal(err)
	}
	if s, ap := status(approved); s != StatusApproved || ap != apID {
		t.Errorf("approved: %q %v, want approval %s", s, ap, apID)
	}
	if s, ap := status(rejected); s != StatusRejected || ap != nil {
		t.Errorf("rejected: %q %v", s, ap)
	}
	if s, _ := status(unsigned); s != StatusUnverified {
		t.Errorf("unsigned answer: %q", s)
	}
	if s, _ := status(lapsing); s != StatusApproved {
		t.Errorf("before until: %q", s)
	}
	now = now.Add(2 * time.Hour)
	if s, ap := status(lapsing); s != StatusExpired || ap != nil {
		t.Errorf("after until: %q %v", s, ap)
	}
	// The approval, presented, lifts the call: what approved promised.
	out := mustOK(t, call(t, c, "may_act", mergeObj(confirmArgs(), obj{"approval_id": apID})))
	if out["decision"] != string(warrant.MayActDecision) {
		t.Fatalf("the approved approval did not lift the call: %v", out)
	}
	if s, ap := status(decisionID(t, out)); s != "" || ap != nil {
		t.Errorf("a MAY_ACT decision has status %q %v", s, ap)
	}
}
