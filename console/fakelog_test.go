package console_test

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/ewp-go/ewp/audit"
)

// memLog is a small in-memory audit.Log for the console's tests: decisions
// kept in decision_id order with a second index of the pending ones, as a
// real store keeps indexes.
type memLog struct {
	mu        sync.Mutex
	ids       []string // sorted
	byID      map[string]*audit.Decision
	pending   []string // sorted ids of unanswered REQUIRE_CONFIRMATION
	approvals map[string]*audit.Approval
	answers   map[string][]string // decision id → approval ids
	used      map[string]string
	seq       int64
}

func newMemLog() *memLog {
	return &memLog{byID: map[string]*audit.Decision{}, approvals: map[string]*audit.Approval{}, answers: map[string][]string{}, used: map[string]string{}}
}

func (m *memLog) Record(_ context.Context, d *audit.Decision) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *d
	m.byID[d.ID] = &c
	i, _ := slices.BinarySearch(m.ids, d.ID)
	m.ids = slices.Insert(m.ids, i, d.ID)
	if d.Outcome == audit.OutcomeRequireConfirmation {
		j, _ := slices.BinarySearch(m.pending, d.ID)
		m.pending = slices.Insert(m.pending, j, d.ID)
	}
	m.seq++
	return nil
}

func (m *memLog) Decision(_ context.Context, id string) (*audit.Decision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.byID[id]
	if !ok {
		return nil, audit.ErrNotFound
	}
	c := *d
	return &c, nil
}

func (m *memLog) ByIdempotencyKey(context.Context, string, string) (*audit.Decision, error) {
	return nil, audit.ErrNotFound
}

func (m *memLog) List(_ context.Context, f audit.Filter) ([]audit.Decision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	src := m.ids
	if f.Pending {
		src = m.pending
	}
	start := 0
	if f.After != "" {
		start, _ = slices.BinarySearch(src, f.After)
		if start < len(src) && src[start] == f.After {
			start++
		}
	}
	var out []audit.Decision
	for _, id := range src[start:] {
		d := m.byID[id]
		if (f.Outcome != "" && d.Outcome != f.Outcome) || (f.PropositionID != "" && d.PropositionID != f.PropositionID) ||
			(!f.Since.IsZero() && d.Time.Before(f.Since)) || (!f.Until.IsZero() && d.Time.After(f.Until)) {
			continue
		}
		out = append(out, *d)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

func (m *memLog) Approve(_ context.Context, a *audit.Approval) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[a.DecisionID]; !ok {
		return audit.ErrNotFound
	}
	c := *a
	m.approvals[a.ID] = &c
	m.answers[a.DecisionID] = append(m.answers[a.DecisionID], a.ID)
	if i, ok := slices.BinarySearch(m.pending, a.DecisionID); ok {
		m.pending = slices.Delete(m.pending, i, i+1)
	}
	m.seq++
	return nil
}

func (m *memLog) Approval(_ context.Context, id string) (*audit.Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.approvals[id]
	if !ok {
		return nil, audit.ErrNotFound
	}
	c := *a
	return &c, nil
}

func (m *memLog) ApprovalsFor(_ context.Context, id string) ([]audit.Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []audit.Approval
	for _, aid := range m.answers[id] {
		out = append(out, *m.approvals[aid])
	}
	return out, nil
}

func (m *memLog) Consume(_ context.Context, id, usedBy string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.used[id]; ok {
		return audit.ErrApprovalUsed
	}
	m.used[id] = usedBy
	return nil
}

func (m *memLog) Head(context.Context) (audit.Head, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return audit.Head{Seq: m.seq, Hash: strings.Repeat("ab", 32)}, nil
}

func (m *memLog) Close() error { return nil }

// covers is what the gate checks before an approval lifts a decision:
// the test's stand-in for the may_act side of the loop (issue #12), which
// the gate's own tests prove; here it shows the console recorded an
// approval that answers the decision it was given for.
func covers(a *audit.Approval, d *audit.Decision) bool {
	if a.Verdict != audit.Approved || a.DecisionID != d.ID {
		return false
	}
	if a.Once {
		return true
	}
	s := a.Scope
	return s != nil && s.PropositionID == d.PropositionID &&
		(s.ActionKind == "" || s.ActionKind == d.ActionKind) &&
		(s.ToolName == "" || s.ToolName == d.ToolName) &&
		(len(s.Concepts) == 0 || slices.Equal(s.Concepts, d.Concepts))
}
