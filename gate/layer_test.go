package gate

import (
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

func TestCombine(t *testing.T) {
	d := func(vs ...audit.Verdict) []LayerDecision {
		var out []LayerDecision
		for _, v := range vs {
			out = append(out, LayerDecision{Decision: v})
		}
		return out
	}
	for _, tc := range []struct {
		in   []LayerDecision
		want warrant.Verdict
	}{
		{d(Skipped, audit.VerdictMayAct), warrant.MayActDecision},
		{d(Skipped, audit.VerdictRequireConfirmation, audit.VerdictMayAct), warrant.RequireConfirmation},
		{d(audit.VerdictMayAct, audit.VerdictDeny, audit.VerdictRequireConfirmation), warrant.Deny},
		{d(Skipped), warrant.Deny}, // nothing judged the action
		{nil, warrant.Deny},
		// A layer that answers no verdict, or one the gate does not
		// order, counts as DENY: a confused layer fails closed.
		{d(audit.VerdictMayAct, ""), warrant.Deny},
		{d(audit.VerdictMayAct, audit.VerdictGrounded), warrant.Deny},
		{d(audit.VerdictRequireConfirmation, "MAYBE"), warrant.Deny},
	} {
		if got := Combine(tc.in); got != tc.want {
			t.Errorf("Combine(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
