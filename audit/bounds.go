package audit

import (
	"encoding/json"
	"fmt"
	"time"
)

// riskRank orders the risks an action declares; an unknown one is
// missing (and then exceeds every bound).
var riskRank = map[string]int{"low": 1, "medium": 2, "high": 3}

// widens says in which way a call's action asks more than the action a
// scope approval answered: more risk, less reversibility or a laxer risk
// policy; "" when it asks no more. A scope names what else it covers
// (kind, tool, concepts); these bounds hold whatever it names, so a
// scope given for a low-risk tweak never lifts a high-risk drop.
func widens(answered, call Action) string {
	if r, ok := riskRank[call.Risk]; !ok || r > riskRank[answered.Risk] {
		return fmt.Sprintf("risk %q is above the risk %q of the decision the scope answered", call.Risk, answered.Risk)
	}
	// Unset (never sent by may_act, which requires it) ranks below true.
	if !isFalse(answered.Reversible) && !isTrue(call.Reversible) && (answered.Reversible != nil || call.Reversible != nil) {
		return fmt.Sprintf("reversible is %s, and the scope answered a reversible action", boolOrUnset(call.Reversible))
	}
	return laxerPolicy(answered.RiskPolicy, call.RiskPolicy)
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }

func boolOrUnset(b *bool) string {
	if b == nil {
		return "unset"
	}
	return fmt.Sprint(*b)
}

// policyFlags are the requirements of a risk policy (warrant.RiskPolicy);
// a policy that leaves one out is not understood.
type policyFlags struct {
	HighRequiresAccepted       *bool `json:"high_requires_accepted"`
	HighRequiresNoOpenConflict *bool `json:"high_requires_no_open_conflict"`
}

// laxerPolicy says how the call's risk policy requires less than the
// answered decision's; "" when it requires at least as much. A policy
// that cannot be read, or is recorded on one side only, counts as laxer.
func laxerPolicy(answered, call any) string {
	if answered == nil && call == nil {
		return ""
	}
	want, wok := flagsOf(answered)
	got, gok := flagsOf(call)
	switch {
	case !wok:
		return "the approval records no risk policy it was given under, so it covers no call judged under one"
	case !gok:
		return fmt.Sprintf("the call's risk_policy %s cannot be compared with the one the scope answered", canonicalJSON(call))
	case *want.HighRequiresAccepted && !*got.HighRequiresAccepted:
		return "risk_policy.high_requires_accepted is false, laxer than the policy the scope answered"
	case *want.HighRequiresNoOpenConflict && !*got.HighRequiresNoOpenConflict:
		return "risk_policy.high_requires_no_open_conflict is false, laxer than the policy the scope answered"
	}
	return ""
}

func flagsOf(v any) (policyFlags, bool) {
	var f policyFlags
	if v == nil {
		return f, false
	}
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &f) != nil {
		return f, false
	}
	return f, f.HighRequiresAccepted != nil && f.HighRequiresNoOpenConflict != nil
}

// DefaultMaxLifetime is how long after its creation an approval is
// honoured when the operator sets no other maximum (ewp-audit
// --max-lifetime, the console's and ewp-mcp's --approval-max-lifetime).
const DefaultMaxLifetime = 24 * time.Hour

// CheckLifetime is the rule where an approval is created, at the
// operator's clock now: its Until is at most max ahead (max 0:
// DefaultMaxLifetime). A once approval may leave Until zero; the gate
// then honours it for max after its creation (see Capped).
func (a *Approval) CheckLifetime(now time.Time, max time.Duration) error {
	if max <= 0 {
		max = DefaultMaxLifetime
	}
	if !a.Until.IsZero() && a.Until.After(now.Add(max)) {
		return fmt.Errorf("%w: until %s is more than the maximum %s ahead (latest %s); give an earlier --until, or ask whoever runs the gate to raise the maximum",
			ErrInvalidApproval, a.Until.UTC().Format(time.RFC3339), max, now.Add(max).UTC().Format(time.RFC3339))
	}
	return nil
}

// Capped is the approval as the gate honours it under the maximum
// lifetime max (0: DefaultMaxLifetime): Until is at most CreatedAt+max,
// and a zero Until becomes CreatedAt+max. A log row can claim any until;
// the gate never honours more than the maximum it is configured with.
// The receiver is not changed.
func (a *Approval) Capped(max time.Duration) *Approval {
	if max <= 0 {
		max = DefaultMaxLifetime
	}
	c := *a
	if limit := a.CreatedAt.Add(max); c.Until.IsZero() || c.Until.After(limit) {
		c.Until = limit
	}
	return &c
}
