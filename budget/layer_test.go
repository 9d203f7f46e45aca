package budget

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

var t0 = time.Date(2026, 12, 7, 14, 5, 0, 0, time.UTC)

func mustParse(t testing.TB, src string) *Budgets {
	t.Helper()
	b, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func input(name string, groups []string, risk string, reversible bool) gate.Input {
	return gate.Input{Agent: audit.Principal{Name: name, Groups: groups},
		Action: warrant.Action{ActionID: "a", Kind: "write", Risk: risk, Reversible: reversible}}
}

func decide(t testing.TB, l *Layer, in gate.Input) gate.LayerDecision {
	t.Helper()
	d, err := l.Decide(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The 61st call in a minute under 60 a minute is DENY with the budget's
// reason; the next minute starts again.
func TestSixtyFirstCallIsDenied(t *testing.T) {
	c := &clock{t0.Add(2 * time.Second)}
	l := NewLayer(mustParse(t, `{"agents":{"bot":{"calls_per_minute":60}}}`), newMem(), c.now)
	for i := 1; i <= 60; i++ {
		if d := decide(t, l, input("bot", nil, "low", true)); d.Decision != audit.VerdictMayAct {
			t.Fatalf("call %d: %s %v", i, d.Decision, d.Reasons)
		}
		c.t = c.t.Add(900 * time.Millisecond) // all within 14:05
	}
	d := decide(t, l, input("bot", nil, "low", true))
	want := "budget.calls_per_minute: 60 of 60 used by agent bot in the minute from 2026-12-07T14:05:00Z"
	if d.Decision != audit.VerdictDeny || len(d.Reasons) != 1 || d.Reasons[0] != want {
		t.Fatalf("61st call: %s %q, want DENY %q", d.Decision, d.Reasons, want)
	}
	c.t = t0.Add(time.Minute)
	if d := decide(t, l, input("bot", nil, "low", true)); d.Decision != audit.VerdictMayAct ||
		d.Reasons[0] != "within budget: calls_per_minute 1 of 60 (agent bot)" {
		t.Fatalf("next minute: %s %q", d.Decision, d.Reasons)
	}
}

func TestDailyBudgetsCountOnlyTheirActions(t *testing.T) {
	c := &clock{t0}
	mem := newMem()
	l := NewLayer(mustParse(t, `{"agents":{"bot":{"high_risk_per_day":2,"irreversible_per_day":1}}}`), mem, c.now)
	steps := []struct {
		risk       string
		reversible bool
		want       audit.Verdict
		reason     string
	}{
		{"low", true, audit.VerdictMayAct, "no budget of the caller counts"},
		{"high", true, audit.VerdictMayAct, "high_risk_per_day 1 of 2"},
		{"low", false, audit.VerdictMayAct, "irreversible_per_day 1 of 1"},
		{"low", false, audit.VerdictDeny, "budget.irreversible_per_day: 1 of 1 used by agent bot in the day 2026-12-07 (UTC)"},
		{"high", true, audit.VerdictMayAct, "high_risk_per_day 2 of 2"},
		{"high", true, audit.VerdictDeny, "budget.high_risk_per_day: 2 of 2 used by agent bot"},
	}
	for i, s := range steps {
		d := decide(t, l, input("bot", nil, s.risk, s.reversible))
		if d.Decision != s.want || !strings.Contains(d.Reasons[0], s.reason) {
			t.Errorf("step %d: %s %q, want %s %q", i, d.Decision, d.Reasons, s.want, s.reason)
		}
	}
	c.t = t0.Add(10 * time.Hour) // the next UTC day
	if d := decide(t, l, input("bot", nil, "high", false)); d.Decision != audit.VerdictMayAct {
		t.Errorf("next day: %s %q", d.Decision, d.Reasons)
	}
}

// A call refused for its rate stops the count: the day's high-risk
// allowance is not used up by it.
func TestFirstExceededStopsTheCount(t *testing.T) {
	c := &clock{t0}
	mem := newMem()
	l := NewLayer(mustParse(t, `{"agents":{"bot":{"calls_per_minute":1,"high_risk_per_day":5}}}`), mem, c.now)
	decide(t, l, input("bot", nil, "high", true))
	if d := decide(t, l, input("bot", nil, "high", true)); d.Decision != audit.VerdictDeny ||
		!strings.HasPrefix(d.Reasons[0], "budget.calls_per_minute: 1 of 1") {
		t.Fatalf("second call: %s %q", d.Decision, d.Reasons)
	}
	if n := mem.get("agent:bot:high_risk:day", t0.Truncate(24*time.Hour)); n != 1 {
		t.Errorf("high-risk count %d, want 1 (the refused call must not count there)", n)
	}
	if n := mem.get("agent:bot:calls:minute", t0); n != 2 {
		t.Errorf("calls count %d, want 2 (a refused call that reached the layer counts)", n)
	}
}

func TestGroupBudgetIsSharedAndDefaultIsEach(t *testing.T) {
	c := &clock{t0}
	l := NewLayer(mustParse(t, `{"groups":{"ops":{"calls_per_minute":2}},"default":{"calls_per_minute":3},"agents":{"boss":{"high_risk_per_day":1}}}`), newMem(), c.now)
	ops := []string{"ops", "dev", "ops"}
	decide(t, l, input("alice", ops, "low", true))
	decide(t, l, input("bob", ops, "low", true))
	d := decide(t, l, input("carol", ops, "low", true))
	if d.Decision != audit.VerdictDeny || !strings.Contains(d.Reasons[0], "2 of 2 used by group ops") {
		t.Fatalf("third member: %s %q", d.Decision, d.Reasons)
	}
	// The default is each agent's own count: dave is not in ops.
	for i := 1; i <= 3; i++ {
		if d := decide(t, l, input("dave", nil, "low", true)); d.Decision != audit.VerdictMayAct {
			t.Fatalf("dave call %d: %s %q", i, d.Decision, d.Reasons)
		}
	}
	if d := decide(t, l, input("erin", nil, "low", true)); d.Decision != audit.VerdictMayAct {
		t.Fatalf("erin: %s %q", d.Decision, d.Reasons)
	}
	if d := decide(t, l, input("dave", nil, "low", true)); d.Decision != audit.VerdictDeny ||
		!strings.Contains(d.Reasons[0], "3 of 3 used by agent dave") {
		t.Fatalf("dave's 4th: %s %q", d.Decision, d.Reasons)
	}
	// boss has its own entry, so the default does not apply to it.
	for i := 0; i < 5; i++ {
		if d := decide(t, l, input("boss", nil, "low", true)); d.Decision != audit.VerdictMayAct {
			t.Fatalf("boss call %d: %s %q", i, d.Decision, d.Reasons)
		}
	}
	// The anonymous caller is held to the default as "anonymous".
	for i := 0; i < 3; i++ {
		decide(t, l, input("", nil, "low", true))
	}
	if d := decide(t, l, input("", nil, "low", true)); !strings.Contains(d.Reasons[0], "used by agent anonymous") {
		t.Fatalf("anonymous: %s %q", d.Decision, d.Reasons)
	}
}

func TestLimitZeroAllowsNone(t *testing.T) {
	l := NewLayer(mustParse(t, `{"groups":{"interns":{"irreversible_per_day":0}}}`), newMem(), (&clock{t0}).now)
	d := decide(t, l, input("ann", []string{"interns"}, "low", false))
	want := "budget.irreversible_per_day: group interns may take no irreversible action (limit 0)"
	if d.Decision != audit.VerdictDeny || d.Reasons[0] != want {
		t.Fatalf("%s %q, want %q", d.Decision, d.Reasons, want)
	}
	if d := decide(t, l, input("ann", []string{"interns"}, "low", true)); d.Decision != audit.VerdictMayAct {
		t.Fatalf("reversible: %s %q", d.Decision, d.Reasons)
	}
}

func TestNoBudgetIsNotApplicable(t *testing.T) {
	l := NewLayer(mustParse(t, `{"agents":{"bot":{"calls_per_minute":1}},"groups":{"ops":{"calls_per_minute":1}}}`), newMem(), nil)
	if _, err := l.Decide(context.Background(), input("other", []string{"dev"}, "low", true)); !errors.Is(err, gate.ErrNotApplicable) {
		t.Fatalf("err %v, want ErrNotApplicable", err)
	}
}

// A counter that cannot be written refuses the whole call (fail closed).
func TestCounterErrorFailsClosed(t *testing.T) {
	mem := newMem()
	mem.err = errors.New("disk full")
	l := NewLayer(mustParse(t, `{"default":{"calls_per_minute":5}}`), mem, nil)
	_, err := l.Decide(context.Background(), input("bot", nil, "low", true))
	if err == nil || !strings.Contains(err.Error(), "counting agent:bot:calls:minute: disk full") {
		t.Fatalf("err %v", err)
	}
}

// Under concurrency exactly the limit's number of calls pass.
func TestConcurrentCallsPassExactlyTheLimit(t *testing.T) {
	l := NewLayer(mustParse(t, `{"agents":{"bot":{"calls_per_minute":60}}}`), newMem(), (&clock{t0}).now)
	var passed atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			if d, err := l.Decide(context.Background(), input("bot", nil, "low", true)); err == nil && d.Decision == audit.VerdictMayAct {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	if passed.Load() != 60 {
		t.Fatalf("%d passed, want 60", passed.Load())
	}
}

// The layer's work is bounded by the groups an agent may have.
func TestTooManyGroupsRefused(t *testing.T) {
	mem := newMem()
	l := NewLayer(mustParse(t, `{"default":{"calls_per_minute":5}}`), mem, nil)
	groups := make([]string, audit.MaxAgentGroups+1)
	for i := range groups {
		groups[i] = fmt.Sprint("g", i)
	}
	if _, err := l.Decide(context.Background(), input("bot", groups, "low", true)); err == nil || !strings.Contains(err.Error(), "33 groups; at most 32") {
		t.Fatalf("err %v", err)
	}
	if len(mem.n) != 0 {
		t.Errorf("counted before refusing: %v", mem.n)
	}
	if _, err := l.Decide(context.Background(), input("bot", groups[:audit.MaxAgentGroups], "low", true)); err != nil {
		t.Fatal(err)
	}
}
