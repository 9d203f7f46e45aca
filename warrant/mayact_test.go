package warrant_test

import (
	"errors"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

func ax(acc, con, cur, suf string) warrant.Axes {
	return warrant.Axes{Acceptance: acc, Conflict: con, Currency: cur, Sufficiency: suf, Verification: warrant.VerExternal}
}

// One row per rule of EWP §7, in the order the spec lists them.
func TestMayActRules(t *testing.T) {
	ok := ax(warrant.Accepted, warrant.ConflictNone, warrant.Current, warrant.Sufficient)
	tent := ax(warrant.Tentative, warrant.ConflictNone, warrant.Current, warrant.Sufficient)
	with := func(a warrant.Axes, f func(*warrant.Axes)) warrant.Axes { f(&a); return a }
	cases := []struct {
		name       string
		w          warrant.Axes
		risk       string
		reversible bool
		want       warrant.Verdict
	}{
		{"unaccepted denies even low risk", with(ok, func(a *warrant.Axes) { a.Acceptance = warrant.Unaccepted }), "low", true, warrant.Deny},
		{"high: superseded", with(ok, func(a *warrant.Axes) { a.Currency = warrant.Superseded }), "high", true, warrant.Deny},
		{"high: not accepted", tent, "high", true, warrant.Deny},
		{"high: open conflict", with(ok, func(a *warrant.Axes) { a.Conflict = warrant.ConflictOpen }), "high", true, warrant.Deny},
		{"high: degraded", with(ok, func(a *warrant.Axes) { a.Sufficiency = warrant.Degraded }), "high", true, warrant.RequireConfirmation},
		{"high: stale", with(ok, func(a *warrant.Axes) { a.Currency = warrant.Stale }), "high", false, warrant.RequireConfirmation},
		{"high: all clear", ok, "high", false, warrant.MayActDecision},
		{"medium: superseded", with(ok, func(a *warrant.Axes) { a.Currency = warrant.Superseded }), "medium", true, warrant.RequireConfirmation},
		{"low: superseded", with(tent, func(a *warrant.Axes) { a.Currency = warrant.Superseded }), "low", true, warrant.RequireConfirmation},
		{"low: open conflict", with(ok, func(a *warrant.Axes) { a.Conflict = warrant.ConflictOpen }), "low", true, warrant.RequireConfirmation},
		{"low: degraded", with(ok, func(a *warrant.Axes) { a.Sufficiency = warrant.Degraded }), "low", true, warrant.RequireConfirmation},
		{"low: stale is fine", with(ok, func(a *warrant.Axes) { a.Currency = warrant.Stale }), "low", true, warrant.MayActDecision},
		{"medium: stale", with(ok, func(a *warrant.Axes) { a.Currency = warrant.Stale }), "medium", true, warrant.RequireConfirmation},
		{"low: tentative is fine", tent, "low", false, warrant.MayActDecision},
		{"medium: tentative", tent, "medium", true, warrant.RequireConfirmation},
		{"medium: accepted irreversible", ok, "medium", false, warrant.MayActDecision},
		{"medium: all clear", ok, "medium", true, warrant.MayActDecision},
	}
	for _, c := range cases {
		d, err := warrant.MayAct(c.w, warrant.Action{ActionID: "a", Kind: "k", Risk: c.risk, Reversible: c.reversible}, warrant.DefaultRiskPolicy())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Decision != c.want || len(d.Reasons) == 0 {
			t.Errorf("%s: got %s %v, want %s with reasons", c.name, d.Decision, d.Reasons, c.want)
		}
	}
}

func TestMayActPolicySwitches(t *testing.T) {
	tent := ax(warrant.Tentative, warrant.ConflictOpen, warrant.Current, warrant.Sufficient)
	p := warrant.DefaultRiskPolicy()
	p.HighRequiresAccepted, p.HighRequiresNoOpenConflict = false, false
	d, _ := warrant.MayAct(tent, warrant.Action{Risk: "high", Reversible: true}, p)
	if d.Decision != warrant.MayActDecision {
		t.Errorf("with both high requirements off, a reversible tentative action: got %s", d.Decision)
	}
	d, _ = warrant.MayAct(tent, warrant.Action{Risk: "high", Reversible: false}, p)
	if d.Decision != warrant.Deny {
		t.Errorf("irreversible high-risk action on a tentative claim: got %s", d.Decision)
	}
}

func TestMayActRefusesUnknownRisk(t *testing.T) {
	_, err := warrant.MayAct(warrant.Axes{}, warrant.Action{Risk: "extreme"}, warrant.DefaultRiskPolicy())
	var e *warrant.Error
	if !errors.As(err, &e) || e.Code != warrant.CodeInvalidAction {
		t.Errorf("got %v", err)
	}
}
