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
}

func newDecisionTail(log audit.Log) *decisionTail {
	return &decisionTail{log: log, byOutcome: map[string]int{}, ready: make(chan struct{})}
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
	}
	t.total += len(batch)
	t.last = batch[len(batch)-1].ID
	keep := batch[max(0, len(batch)-recentKept):]
	t.recent = append(t.recent, keep...)
	if n := len(t.recent); n > recentKept {
		t.recent = append([]audit.Decision(nil), t.recent[n-recentKept:]...)
	}
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
