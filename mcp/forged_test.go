package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/warrant"
)

// editedApprovals is a log whose approvals read back edited, as a row
// changed in the file after it was signed would.
type editedApprovals struct {
	audit.Log
	edit func(*audit.Approval)
}

func (e editedApprovals) Approval(ctx context.Context, id string) (*audit.Approval, error) {
	a, err := e.Log.Approval(ctx, id)
	if err == nil {
		e.edit(a)
	}
	return a, err
}

// TestForgedApprovalsAreRefused: an approval stored through the log's
// normal path but not signed by an operator key the server trusts (a
// process that can write the log but holds no key), one edited after it
// was signed, and any approval on a server without operator keys: each
// is refused with its named reason, the decision stays
// REQUIRE_CONFIRMATION, nothing is consumed, and the layer's detail trusts
// nothing the approval says but its id.
func TestForgedApprovalsAreRefused(t *testing.T) {
	ml := memlog.New(func() time.Time { return testNow })
	mallory := audittest.NewOperator("mallory")
	cases := []struct {
		name   string
		keys   *audit.OperatorKeys
		log    audit.Log
		store  func(d *audit.Decision, a *audit.Approval)
		reason string
	}{
		{"unsigned", alice.Keys, ml, func(_ *audit.Decision, a *audit.Approval) { a.Approver = "alice" }, ReasonApprovalUnsigned},
		{"signed by an unknown key", alice.Keys, ml, func(d *audit.Decision, a *audit.Approval) { mallory.Sign(a, d, testNow) }, ReasonApprovalUnknownKey},
		{"edited after signing", alice.Keys, editedApprovals{ml, func(a *audit.Approval) { a.Once, a.Scope = false, nil }},
			func(d *audit.Decision, a *audit.Approval) { alice.Sign(a, d, testNow) }, ReasonApprovalBadSignature},
		{"no operator keys", nil, ml, func(d *audit.Decision, a *audit.Approval) { alice.Sign(a, d, testNow) }, ReasonNoOperatorKeys},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := newTestServer(t, WithDecisionLog(DecisionLog{Log: tc.log, OperatorKeys: tc.keys}))
			c := dialInProcess(t, srv)
			asked := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
			d, err := ml.Decision(context.Background(), asked)
			if err != nil {
				t.Fatal(err)
			}
			a := &audit.Approval{DecisionID: asked, Verdict: audit.Approved, Once: true}
			tc.store(d, a)
			if err := ml.Approve(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			out := mustOK(t, call(t, c, "may_act", mergeObj(confirmArgs(), obj{"approval_id": a.ID})))
			dec, why, detail := approvalOf(t, out)
			if out["decision"] != string(warrant.RequireConfirmation) || dec != string(warrant.RequireConfirmation) || !strings.HasPrefix(why, tc.reason+":") {
				t.Fatalf("want REQUIRE_CONFIRMATION with %s, got %v / %s", tc.reason, out["decision"], why)
			}
			if detail["approver"] != nil || detail["approval_id"] != a.ID {
				t.Errorf("the detail of an untrusted approval: %v", detail)
			}
			if _, used := ml.UsedBy(a.ID); used {
				t.Error("an untrusted approval was consumed")
			}
		})
	}
}
