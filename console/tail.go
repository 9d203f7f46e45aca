package console

import (
	"context"
	"sync"

	"github.com/ewp-go/ewp/audit"
)

// recentKept is how many of the newest decisions the tail keeps: one more
// than a page, so the feed can open on its newest page.
const recentKept = pageSize + 1

// overviewRecent is how many of them the overview shows.
const overviewRecent = 15

// decisionTail follows the decision log in the background (List with
// After, in recording order, so a decision recorded late is not skipped),
// so the overview can show the newest decisions and totals without a
// query that reads the whole log.
type decisionTail struct {
	log audit.Log

	// ready is closed once the first follow has read the log.
	ready     chan struct{}
	readyOnce sync.Once

	mu        sync.RWMutex
	last      string // the newest decision_id seen
	recent    []audit.Decision
	total     int
	byOutcome map[string]int
	// byProp keeps, per proposition, its newest decisions (at most
	// propDecisions+1, oldest first, slimmed by slimDecision), so a
	// proposition page lists them without a query that reads the whole
	// log. It tracks at most propsTracked propositions: one first seen
	// after that is answered by the log itself (Console.decisionsOn).
	byProp map[string][]audit.Decision
}

// propsTracked bounds the propositions decisionTail indexes (a few tens
// of MB at most: propDecisions+1 slim decisions each).
const propsTracked = 10_000

func newDecisionTail(log audit.Log) *decisionTail {
	return &decisionTail{log: log, byOutcome: map[string]int{}, byProp: map[string][]audit.Decision{}, ready: make(chan struct{})}
}

// tailBatch is how many decisions one List call reads while catching up.
const tailBatch = 1000

// follow reads whatever the log recorded since the last call.
func (t *decisionTail) follow(ctx context.Context) error {
	if t.log == nil {
		t.readyOnce.Do(func() { close(t.ready) })
		return nil
	}
	defer t.readyOnce.Do(func() { close(t.ready) })
	t.mu.RLock()
	after := t.last
	t.mu.RUnlock()
	for {
		batch, err := t.log.List(ctx, audit.Filter{After: after, Limit: tailBatch})
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		t.add(batch)
		after = batch[len(batch)-1].ID
		if len(batch) < tailBatch {
			return nil
		}
	}
}

func (t *decisionTail) add(batch []audit.Decision) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range batch {
		t.byOutcome[string(d.Outcome)]++
		t.index(d)
	}
	t.total += len(batch)
	t.last = batch[len(batch)-1].ID
	keep := batch[max(0, len(batch)-recentKept):]
	t.recent = append(t.recent, keep...)
	if n := len(t.recent); n > recentKept {
		t.recent = append([]audit.Decision(nil), t.recent[n-recentKept:]...)
	}
}

// index adds d to its proposition's newest decisions.
func (t *decisionTail) index(d audit.Decision) {
	if d.PropositionID == "" {
		return
	}
	rows, ok := t.byProp[d.PropositionID]
	if !ok && len(t.byProp) >= propsTracked {
		return
	}
	rows = append(rows, slimDecision(d))
	if len(rows) > propDecisions+1 {
		rows = append(rows[:0], rows[len(rows)-propDecisions-1:]...)
	}
	t.byProp[d.PropositionID] = rows
}

// slimDecision keeps what a proposition page's list shows of a decision.
func slimDecision(d audit.Decision) audit.Decision {
	return audit.Decision{ID: d.ID, Time: d.Time, Tool: d.Tool, Outcome: d.Outcome, Code: d.Code,
		ActionKind: d.ActionKind, ToolName: d.ToolName, PropositionID: d.PropositionID,
		Caller: audit.Caller{ClientName: d.Caller.ClientName, Transport: d.Caller.Transport}}
}

// decisionsOn returns a proposition's newest decisions, newest first (at
// most propDecisions+1), and false when the tail cannot answer: it has not
// read the log once yet, or does not track the proposition.
func (t *decisionTail) decisionsOn(propositionID string) ([]audit.Decision, bool) {
	select {
	case <-t.ready:
	default:
		return nil, false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	rows, ok := t.byProp[propositionID]
	if !ok && len(t.byProp) >= propsTracked {
		return nil, false
	}
	out := make([]audit.Decision, len(rows))
	for i, d := range rows {
		out[len(rows)-1-i] = d
	}
	return out, true
}

// tailView is what the overview shows: newest first.
type tailView struct {
	Recent    []audit.Decision
	Total     int
	ByOutcome map[string]int
}

func (t *decisionTail) view() tailView {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := tailView{Total: t.total, ByOutcome: make(map[string]int, len(t.byOutcome))}
	for i := len(t.recent) - 1; i >= max(0, len(t.recent)-overviewRecent); i-- {
		out.Recent = append(out.Recent, t.recent[i])
	}
	for k, v := range t.byOutcome {
		out.ByOutcome[k] = v
	}
	return out
}

// newestCursor is the After cursor whose page holds the newest n
// decisions ("" when there are no more than n).
func (t *decisionTail) newestCursor(n int) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if len(t.recent) <= n {
		return ""
	}
	return t.recent[len(t.recent)-n-1].ID
}
