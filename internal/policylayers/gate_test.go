package policylayers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

// countingMemlog is memlog with counts in memory (audit.Counters), as the
// stores keep them.
type countingMemlog struct {
	*memlog.Log
	mu sync.Mutex
	n  map[string]int64
}

func (l *countingMemlog) Add(_ context.Context, key string, w time.Time, n int64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := key + "@" + w.Format(time.RFC3339)
	l.n[k] += n
	return l.n[k], nil
}

// The layers Build makes, in a gate: each decision is recorded with the
// call_policies and budget layers, the policy's id and the budget named in
// the reasons.
func TestBuiltLayersInTheGate(t *testing.T) {
	log := &countingMemlog{Log: memlog.New(nil), n: map[string]int64{}}
	now := time.Date(2026, 12, 7, 14, 5, 0, 0, time.UTC)
	b, err := Build(Files{
		CallPolicies: write(t, "calls.cedar", `@id("ops_no_etc") forbid (principal in Group::"ops", action, resource)
			when { context.input has path && context.input.path like "/etc/*" };`),
		Budgets: write(t, "budgets.json", `{"agents":{"bot":{"calls_per_minute":3}}}`),
	}, log, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Config{Log: log, Layers: b.Layers, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	decide := func(agent audit.Principal, path string) (gate.Answer, *audit.Decision) {
		t.Helper()
		args := fmt.Sprintf(`{"path":%q}`, path)
		ans, err := g.Decide(context.Background(), gate.Request{Agent: agent,
			Call:   &gate.ToolCall{Entrance: "gateway", Name: "fs/read_file", Rule: "fs/*", Arguments: json.RawMessage(args), Recorded: json.RawMessage(args)},
			Action: warrant.Action{ActionID: "a", Kind: "read", Risk: "low", Reversible: true}, RiskPolicy: warrant.DefaultRiskPolicy()})
		if err != nil {
			t.Fatal(err)
		}
		d, err := log.Decision(context.Background(), ans.DecisionID)
		if err != nil {
			t.Fatal(err)
		}
		return ans, d
	}
	layer := func(ls []audit.Layer, name string) *audit.Layer {
		for i := range ls {
			if ls[i].Layer == name {
				return &ls[i]
			}
		}
		return nil
	}
	bot := audit.Principal{Name: "bot", Groups: []string{"ops"}}
	eve := audit.Principal{Name: "eve", Groups: []string{"dev"}}

	ans, d := decide(bot, "/etc/passwd")
	cp := layer(d.Layers, "call_policies")
	if ans.Decision != warrant.Deny || cp == nil || cp.Decision != audit.VerdictDeny ||
		cp.Reasons[0] != `call policy "ops_no_etc" forbids fs/read_file for agent bot` {
		t.Fatalf("ops member on /etc: %s, recorded %+v", ans.Decision, d.Layers)
	}
	if ans, _ := decide(eve, "/etc/passwd"); ans.Decision != warrant.MayActDecision {
		t.Fatalf("non-member on /etc: %s %+v", ans.Decision, ans.Layers)
	}
	// eve has no budget: the layer is left out of her answers.
	if _, d := decide(eve, "/tmp/x"); layer(d.Layers, "budget") != nil {
		t.Fatalf("a budget layer for an agent no budget names: %+v", d.Layers)
	}
	decide(bot, "/tmp/a") // bot's second and third calls of the minute
	if ans, _ := decide(bot, "/tmp/b"); ans.Decision != warrant.MayActDecision {
		t.Fatalf("bot's third call: %s %+v", ans.Decision, ans.Layers)
	}
	ans, d = decide(bot, "/tmp/c")
	bl := layer(d.Layers, "budget")
	if ans.Decision != warrant.Deny || d.Outcome != audit.OutcomeDeny || bl == nil ||
		!strings.HasPrefix(bl.Reasons[0], "budget.calls_per_minute: 3 of 3 used by agent bot") {
		t.Fatalf("bot's fourth call: %s, recorded %+v", ans.Decision, d.Layers)
	}
}

// A retry the gate answers from the record under its idempotency key is
// not judged again, so the budget does not count it.
func TestIdempotentRetryIsNotCounted(t *testing.T) {
	log := &countingMemlog{Log: memlog.New(nil), n: map[string]int64{}}
	now := time.Date(2026, 12, 7, 14, 5, 0, 0, time.UTC)
	b, err := Build(Files{Budgets: write(t, "budgets.json", `{"default":{"calls_per_minute":1}}`)}, log, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Config{Log: log, Layers: b.Layers, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	req := func(key string) gate.Request {
		return gate.Request{Agent: audit.Principal{Name: "bot"}, IdempotencyKey: key, Caller: audit.Caller{Transport: "inprocess", Role: "evaluate"},
			Call:   &gate.ToolCall{Entrance: "gateway", Name: "fs/read_file", Arguments: json.RawMessage(`{}`), Recorded: json.RawMessage(`{}`)},
			Action: warrant.Action{ActionID: "a", Kind: "read", Risk: "low", Reversible: true}, RiskPolicy: warrant.DefaultRiskPolicy()}
	}
	for i := range 3 {
		ans, err := g.Decide(context.Background(), req("k-1"))
		if err != nil || ans.Decision != warrant.MayActDecision || ans.Replayed != (i > 0) {
			t.Fatalf("try %d: %s replayed=%v %v", i, ans.Decision, ans.Replayed, err)
		}
	}
	if ans, err := g.Decide(context.Background(), req("k-2")); err != nil || ans.Decision != warrant.Deny {
		t.Fatalf("a new call past the budget: %s %v", ans.Decision, err)
	}
}
