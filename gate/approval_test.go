package gate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// approvalsOf is an ApprovalReader over a fixed set, or failing with err.
type approvalsOf struct {
	byID map[string]*audit.Approval
	err  error
}

func (a approvalsOf) Approval(_ context.Context, id string) (*audit.Approval, error) {
	if a.err != nil {
		return nil, a.err
	}
	if ap, ok := a.byID[id]; ok {
		return ap, nil
	}
	return nil, audit.ErrNotFound
}

// An approval the gate cannot trust leaves the decision as the other
// layers gave it, with a reason naming why; a log that cannot be read
// fails the call instead of judging on nothing.
func TestApprovalsJudgeRefusals(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d := &audit.Decision{ApprovalID: "A-1"}
	unsigned := &audit.Approval{ID: "A-1", Approver: "alice", Verdict: "approve"}
	for _, tc := range []struct {
		name   string
		log    ApprovalReader
		reason string
	}{
		{"unknown", approvalsOf{}, ReasonApprovalUnknown},
		{"no operator keys", approvalsOf{byID: map[string]*audit.Approval{"A-1": unsigned}}, ReasonNoOperatorKeys},
	} {
		l, once, err := Approvals{Log: tc.log}.Judge(context.Background(), d, warrant.RequireConfirmation, now)
		if err != nil || once {
			t.Fatalf("%s: once %v, err %v", tc.name, once, err)
		}
		if l.Layer != ApprovalLayerName || l.Decision != audit.VerdictRequireConfirmation ||
			len(l.Reasons) != 1 || !strings.HasPrefix(l.Reasons[0], tc.reason+": ") {
			t.Errorf("%s: %+v, want REQUIRE_CONFIRMATION for %s", tc.name, l, tc.reason)
		}
		if det, ok := l.Detail.(ApprovalDetail); !ok || det != (ApprovalDetail{ApprovalID: "A-1"}) {
			t.Errorf("%s: an untrusted approval's detail names more than its id: %+v", tc.name, l.Detail)
		}
	}
	broken := errors.New("disk on fire")
	if _, _, err := (Approvals{Log: approvalsOf{err: broken}}).Judge(context.Background(), d, warrant.RequireConfirmation, now); !errors.Is(err, broken) {
		t.Errorf("an unreadable log: err %v, want it to fail the call", err)
	}
}

// Unlift keeps the other layers' REQUIRE_CONFIRMATION in the last
// (approval) layer, with the reason the log refused the approval's use.
func TestUnlift(t *testing.T) {
	layers := []LayerDecision{
		{Layer: WarrantLayerName, Decision: audit.VerdictRequireConfirmation},
		{Layer: ApprovalLayerName, Decision: audit.VerdictMayAct, Reasons: []string{"APPROVED: ..."}},
	}
	if got := Unlift(layers, "APPROVAL_USED: gone"); got != warrant.RequireConfirmation {
		t.Errorf("Unlift decided %s", got)
	}
	if l := layers[1]; l.Decision != audit.VerdictRequireConfirmation || len(l.Reasons) != 1 || l.Reasons[0] != "APPROVAL_USED: gone" {
		t.Errorf("approval layer after Unlift: %+v", l)
	}
}

// An approval bound to one agent, presented by another, gets its own
// reason in the approval layer: the rule is audit's (Covers), the words
// the gate's.
func TestWrongAgentHasItsReason(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := &audit.Approval{ID: "A-1", Verdict: audit.Approved, Once: true, Agent: "alice",
		Action: &audit.Action{PropositionID: "P"}}
	err := a.Covers(&audit.Decision{Agent: "bob", PropositionID: "P"}, now)
	why, ok := RefusedReason("A-1", err)
	if !ok || !strings.HasPrefix(why, ReasonApprovalWrongAgent+": approval A-1:") {
		t.Fatalf("Covers said %v; the layer's reason is %q (known %v)", err, why, ok)
	}
}
