package budget

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

// LayerName is the layer's name in the gate's answer.
const LayerName = "budget"

// measure is one thing a budget limits.
type measure struct {
	name    string // the limit's name in the file and the reason
	key     string // the counter key's suffix
	window  time.Duration
	limit   func(Limits) *int64
	applies func(warrant.Action) bool
	what    string // "call", "high-risk action", …, for a limit of 0
}

// measures in the order they are counted: the first exceeded stops.
var measures = []measure{
	{"calls_per_minute", "calls:minute", time.Minute, func(l Limits) *int64 { return l.CallsPerMinute },
		func(warrant.Action) bool { return true }, "call"},
	{"high_risk_per_day", "high_risk:day", 24 * time.Hour, func(l Limits) *int64 { return l.HighRiskPerDay },
		func(a warrant.Action) bool { return a.Risk == "high" }, "high-risk action"},
	{"irreversible_per_day", "irreversible:day", 24 * time.Hour, func(l Limits) *int64 { return l.IrreversiblePerDay },
		func(a warrant.Action) bool { return !a.Reversible }, "irreversible action"},
}

// Layer is the budget gate layer.
type Layer struct {
	b        *Budgets
	counters audit.Counters
	now      func() time.Time
}

// NewLayer is the layer over b counting in counters; now is its clock
// (nil: time.Now).
func NewLayer(b *Budgets, counters audit.Counters, now func() time.Time) *Layer {
	if now == nil {
		now = time.Now
	}
	return &Layer{b: b, counters: counters, now: now}
}

// Name is LayerName.
func (*Layer) Name() string { return LayerName }

// ActionKeys: the layer reads only risk and reversible, the warrant
// layer's fields.
func (*Layer) ActionKeys() []string { return nil }

// Count is one budget's count for a call, in the layer's detail.
type Count struct {
	Budget string    `json:"budget"`
	Scope  string    `json:"scope"` // "agent" or "group"
	Name   string    `json:"name"`
	Window time.Time `json:"window"`
	Used   int64     `json:"used"`
	Limit  int64     `json:"limit"`
}

// Detail is the layer's detail.
type Detail struct {
	Counts []Count `json:"counts"`
}

// scope is a budget that applies to the caller.
type scope struct {
	kind, name string
	limits     Limits
}

// scopes are the caller's budgets: its own (or the default), then its
// groups' in name order.
func (b *Budgets) scopes(p audit.Principal) []scope {
	name := p.Name
	if name == "" {
		name = audit.Anonymous
	}
	var out []scope
	if l, ok := b.Agents[name]; ok {
		out = append(out, scope{"agent", name, l})
	} else if b.Default != nil {
		out = append(out, scope{"agent", name, *b.Default})
	}
	groups := slices.Clone(p.Groups)
	slices.Sort(groups)
	for _, g := range slices.Compact(groups) {
		if l, ok := b.Groups[g]; ok {
			out = append(out, scope{"group", g, l})
		}
	}
	return out
}

// Decide counts the call against each budget that applies to it.
// Its work is bounded: at most 3 × (1 + audit.MaxAgentGroups) counts a
// call; a principal with more groups than an agent may have is refused.
func (l *Layer) Decide(ctx context.Context, in gate.Input) (gate.LayerDecision, error) {
	if len(in.Agent.Groups) > audit.MaxAgentGroups {
		return gate.LayerDecision{}, fmt.Errorf("budget: the principal has %d groups; at most %d", len(in.Agent.Groups), audit.MaxAgentGroups)
	}
	scopes := l.b.scopes(in.Agent)
	if len(scopes) == 0 {
		return gate.LayerDecision{}, gate.ErrNotApplicable
	}
	now := l.now().UTC()
	var counts []Count
	for _, m := range measures {
		if !m.applies(in.Action) {
			continue
		}
		for _, s := range scopes {
			limit := m.limit(s.limits)
			if limit == nil {
				continue
			}
			c := Count{Budget: m.name, Scope: s.kind, Name: s.name, Window: now.Truncate(m.window), Limit: *limit}
			key := s.kind + ":" + s.name + ":" + m.key
			n, err := l.counters.Add(ctx, key, c.Window, 1)
			if err != nil {
				return gate.LayerDecision{}, fmt.Errorf("budget: counting %s: %w", key, err)
			}
			c.Used = min(n, c.Limit)
			counts = append(counts, c)
			if n > c.Limit {
				return gate.LayerDecision{Decision: audit.VerdictDeny, Reasons: []string{exceeded(m, c)}, Detail: Detail{counts}}, nil
			}
		}
	}
	return gate.LayerDecision{Decision: audit.VerdictMayAct, Reasons: []string{within(counts)}, Detail: Detail{Counts: nonNil(counts)}}, nil
}

func nonNil(c []Count) []Count {
	if c == nil {
		return []Count{}
	}
	return c
}

// exceeded is the refusal's reason.
func exceeded(m measure, c Count) string {
	if c.Limit == 0 {
		return fmt.Sprintf("budget.%s: %s %s may take no %s (limit 0)", m.name, c.Scope, c.Name, m.what)
	}
	return fmt.Sprintf("budget.%s: %d of %d used by %s %s in %s", m.name, c.Used, c.Limit, c.Scope, c.Name, windowText(m, c.Window))
}

func windowText(m measure, w time.Time) string {
	if m.window == time.Minute {
		return "the minute from " + w.Format(time.RFC3339)
	}
	return "the day " + w.Format(time.DateOnly) + " (UTC)"
}

func within(counts []Count) string {
	if len(counts) == 0 {
		return "within budget: no budget of the caller counts this action"
	}
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = fmt.Sprintf("%s %d of %d (%s %s)", c.Budget, c.Used, c.Limit, c.Scope, c.Name)
	}
	return "within budget: " + strings.Join(parts, "; ")
}
