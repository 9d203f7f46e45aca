package mcp

import (
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/warrant"
)

// loggedDemo is the demo graph and policies with an in-memory decision log.
func loggedDemo(t *testing.T) (*Server, *memlog.Log) {
	t.Helper()
	ml := memlog.New(func() time.Time { return testNow })
	return demoServer(t, WithDecisionLog(testLog(ml))), ml
}

// Issue 19 item 3: a once approval of a single-file delete does not lift
// the same call marked multiple, which fires a policy the operator never
// saw (bulk_delete); min_depth is bound the same way.
func TestOnceApprovalBindsCardinalityAndMinDepth(t *testing.T) {
	srv, ml := loggedDemo(t)
	c := dialInProcess(t, srv)
	deleteFile := []any{"delete", "file"}
	single := obj{"proposition_id": "P-verified", "action": guardAct(deleteFile, rm("protected.txt", "single"))}
	asked := mustOK(t, call(t, c, "may_act", single))
	if asked["decision"] != string(warrant.RequireConfirmation) {
		t.Fatalf("want REQUIRE_CONFIRMATION, got %v", asked)
	}
	rec, err := ml.Decision(t.Context(), decisionID(t, asked))
	if err != nil || rec.Cardinality != "single" || rec.MinDepth != nil {
		t.Fatalf("the decision does not keep the cardinality: %+v %v", rec, err)
	}
	ap := approve(t, ml, audit.Approval{DecisionID: rec.ID, Once: true})
	for _, extra := range []obj{rm("protected.txt", "multiple"), mergeObj(rm("protected.txt", "single"), obj{"min_depth": 0})} {
		args := obj{"proposition_id": "P-verified", "action": guardAct(deleteFile, extra), "approval_id": ap}
		out := mustOK(t, call(t, c, "may_act", args))
		if _, why, _ := approvalOf(t, out); out["decision"] != string(warrant.RequireConfirmation) || !strings.HasPrefix(why, ReasonApprovalWrongAction+":") {
			t.Fatalf("%v: the once approval lifted a call it did not answer: %v / %s", extra, out["decision"], why)
		}
	}
	out := mustOK(t, call(t, c, "may_act", mergeObj(single, obj{"approval_id": ap})))
	if out["decision"] != string(warrant.MayActDecision) {
		t.Fatalf("the call it answered: %v", out)
	}
}

// Issue 19 item 6: a guard-only call (no proposition: the demo's
// protected-file deletion) is approved within a scope of its tool and
// concepts, which covers another such deletion and nothing with a
// proposition.
func TestScopeOfAGuardOnlyDecision(t *testing.T) {
	srv, ml := loggedDemo(t)
	c := dialInProcess(t, srv)
	deleteFile := []any{"delete", "file"}
	asked := mustOK(t, call(t, c, "may_act", obj{"action": guardAct(deleteFile, rm("protected.txt", "single"))}))
	if asked["decision"] != string(warrant.RequireConfirmation) {
		t.Fatalf("want REQUIRE_CONFIRMATION, got %v", asked)
	}
	ap := approve(t, ml, audit.Approval{DecisionID: decisionID(t, asked), Scope: &audit.Scope{ToolName: "rm", Concepts: []string{"delete", "file"}},
		Until: testNow.Add(time.Hour)})
	other := obj{"action": mergeObj(guardAct(deleteFile, rm("protected/other.txt", "single")), obj{"action_id": "act-h"}), "approval_id": ap}
	out := mustOK(t, call(t, c, "may_act", other))
	if _, why, _ := approvalOf(t, out); out["decision"] != string(warrant.MayActDecision) || !strings.HasPrefix(why, ReasonApproved+":") {
		t.Fatalf("the guard-only scope did not lift another protected delete: %v / %s", out["decision"], why)
	}
	withProp := mergeObj(other, obj{"proposition_id": "P-verified"})
	out = mustOK(t, call(t, c, "may_act", withProp))
	if _, why, _ := approvalOf(t, out); out["decision"] != string(warrant.RequireConfirmation) || !strings.HasPrefix(why, ReasonApprovalWrongProposition+":") {
		t.Fatalf("the guard-only scope lifted a call naming a proposition: %v / %s", out["decision"], why)
	}
}
