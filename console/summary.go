package console

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

// States the overview counts and the propositions page filters by.
var stateFilters = []stateFilter{
	{"open", "conflict OPEN", func(a *warrant.Axes) bool { return a.Conflict == warrant.ConflictOpen }},
	{"stale", "STALE", func(a *warrant.Axes) bool { return a.Currency == warrant.Stale }},
	{"degraded", "DEGRADED", func(a *warrant.Axes) bool { return a.Sufficiency == warrant.Degraded }},
	{"superseded", "SUPERSEDED", func(a *warrant.Axes) bool { return a.Currency == warrant.Superseded }},
	{"unaccepted", "UNACCEPTED", func(a *warrant.Axes) bool { return a.Acceptance == warrant.Unaccepted }},
}

type stateFilter struct {
	Key, Label string
	match      func(*warrant.Axes) bool
}

// propState is what the summary keeps of one proposition: its latest
// snapshot's warrant, and when that warrant next changes by the clock
// alone (0: never), so only the propositions the clock has moved are
// evaluated again.
type propState struct {
	ViewID string
	Axes   warrant.Axes
	Next   warrant.Instant
	Err    string // the latest snapshot could not be read or evaluated
	// text is the latest snapshot's assertion texts in lower case, for
	// search.
	text string
}

// summary is the background index behind the overview's counts and the
// propositions page: counting states by evaluating 100,000 views per
// request is out of the question, so it is kept here, computed once,
// followed incrementally as the store's head moves (Since), and
// re-evaluated only where the clock changes a warrant (nextChange).
type summary struct {
	src EvidenceSource
	now func() time.Time

	mu     sync.RWMutex
	props  map[string]*propState
	ids    []string            // every proposition, sorted
	lower  []string            // ids[i] in lower case, for search
	texts  []string            // ids[i]'s latest assertion texts, lower case
	byKey  map[string][]string // state key → sorted ids in that state
	asOf   time.Time
	seq    int64 // last snapshot sequence followed
	head   ChainHead
	failed int // propositions whose latest snapshot did not evaluate

	ready     chan struct{}
	readyOnce sync.Once
}

func newSummary(src EvidenceSource, now func() time.Time) *summary {
	return &summary{src: src, now: now, props: map[string]*propState{}, byKey: map[string][]string{}, ready: make(chan struct{})}
}

// sinceBatch is how many snapshot rows one Since call reads.
const sinceBatch = 5000

// refresh follows the store to its head and re-evaluates what the clock
// moved, then recomputes the indexes when anything changed.
func (s *summary) refresh(ctx context.Context) error {
	head, err := s.src.Head(ctx)
	if err != nil {
		return err
	}
	s.mu.RLock()
	moved, seq := head != s.head, s.seq
	s.mu.RUnlock()
	now := instantOf(s.now())
	changed := map[string]bool{}
	for moved {
		batch, err := s.src.Since(ctx, seq, sinceBatch)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			break
		}
		for _, si := range batch {
			changed[si.PropositionID] = true
		}
		seq = batch[len(batch)-1].Seq
	}
	s.mu.RLock()
	for id, st := range s.props {
		if st.Next != 0 && st.Next <= now {
			changed[id] = true
		}
	}
	s.mu.RUnlock()
	fresh, err := s.evaluateAll(ctx, changed, now)
	if err != nil {
		return err
	}
	s.apply(fresh, seq, head, timeOf(now))
	return nil
}

// evaluateAll evaluates the propositions on every core: the first summary
// of a large ledger reads and evaluates every latest snapshot.
func (s *summary) evaluateAll(ctx context.Context, ids map[string]bool, now warrant.Instant) (map[string]*propState, error) {
	work := make(chan string)
	type result struct {
		id string
		st *propState
	}
	results := make(chan result)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for id := range work {
				results <- result{id, s.evaluate(ctx, id, now)}
			}
		})
	}
	go func() {
		defer close(work)
		for id := range ids {
			select {
			case work <- id:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	fresh := make(map[string]*propState, len(ids))
	for r := range results {
		fresh[r.id] = r.st
	}
	return fresh, ctx.Err()
}

// evaluate computes one proposition's state from its latest snapshot.
func (s *summary) evaluate(ctx context.Context, id string, now warrant.Instant) *propState {
	v, err := s.src.Latest(ctx, id)
	if err != nil {
		return &propState{Err: err.Error()}
	}
	w, err := evalAt(v, now)
	if err != nil {
		return &propState{ViewID: v.ViewID, Err: err.Error()}
	}
	texts := make([]string, len(v.Assertions))
	for i, a := range v.Assertions {
		texts[i] = strings.ToLower(a.Text)
	}
	st := &propState{ViewID: v.ViewID, Axes: w.Warrant, text: strings.Join(texts, "\n")}
	st.Axes.RationaleCodes = nil // not shown in lists; keeps 100k entries small
	if next, ok := nextChange(v, w, now); ok {
		st.Next = next
	}
	return st
}

// apply installs new states and rebuilds the sorted indexes.
func (s *summary) apply(fresh map[string]*propState, seq int64, head ChainHead, asOf time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	added := false
	for id, st := range fresh {
		if _, ok := s.props[id]; !ok {
			added = true
		}
		s.props[id] = st
	}
	if added {
		s.ids = s.ids[:0]
		for id := range s.props {
			s.ids = append(s.ids, id)
		}
		slices.Sort(s.ids)
		s.lower = s.lower[:0]
		for _, id := range s.ids {
			s.lower = append(s.lower, strings.ToLower(id))
		}
	}
	if len(fresh) > 0 {
		s.texts = s.texts[:0]
		for _, id := range s.ids {
			s.texts = append(s.texts, s.props[id].text)
		}
	}
	if len(fresh) > 0 || s.asOf.IsZero() {
		s.reindex()
	}
	s.seq, s.head, s.asOf = seq, head, asOf
	s.readyOnce.Do(func() { close(s.ready) })
}

// reindex rebuilds the per-state lists, in id order.
func (s *summary) reindex() {
	by := make(map[string][]string, len(stateFilters))
	s.failed = 0
	for _, id := range s.ids {
		st := s.props[id]
		if st.Err != "" {
			s.failed++
			continue
		}
		for _, f := range stateFilters {
			if f.match(&st.Axes) {
				by[f.Key] = append(by[f.Key], id)
			}
		}
	}
	s.byKey = by
}

// stateCount is one line of the overview.
type stateCount struct {
	Key, Label string
	N          int
}

// snapshotView is a consistent read of the summary for one page.
type snapshotView struct {
	Ready  bool
	AsOf   time.Time
	Total  int
	Failed int
	Counts []stateCount
	Head   ChainHead
}

func (s *summary) view() snapshotView {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := snapshotView{Ready: !s.asOf.IsZero(), AsOf: s.asOf, Total: len(s.ids), Failed: s.failed, Head: s.head}
	for _, f := range stateFilters {
		out.Counts = append(out.Counts, stateCount{f.Key, f.Label, len(s.byKey[f.Key])})
	}
	return out
}

// page returns ids [off, off+n) of the propositions in state key ("" for
// all), and how many there are.
func (s *summary) page(key string, off, n int) ([]string, int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	list := s.ids
	if key != "" {
		list = s.byKey[key]
	}
	if off >= len(list) {
		return nil, len(list)
	}
	return slices.Clone(list[off:min(off+n, len(list))]), len(list)
}

// state returns the summary's state of one proposition.
func (s *summary) state(id string) (propState, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.props[id]
	if !ok {
		return propState{}, false
	}
	return *st, true
}

// search returns up to limit propositions whose id or latest assertion
// text contains q, ignoring case, in id order. It scans memory: the
// ledger's trigram index answered a query common to 100,000 texts in
// 1.5 s, this in milliseconds.
func (s *summary) search(q string, limit int) []string {
	fold := strings.ToLower(q)
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for i, id := range s.lower {
		if strings.Contains(id, fold) || strings.Contains(s.texts[i], fold) {
			out = append(out, s.ids[i])
			if len(out) == limit {
				break
			}
		}
	}
	return out
}
