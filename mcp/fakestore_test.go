package mcp

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/ewp-go/ewp/warrant"
)

// fakeStore is an in-memory Store that keeps the ledger rules the server
// relies on (immutable snapshots, atomic appends, ErrNotFound), so the
// server's tests exercise real behaviour without the SQLite ledger.
type fakeStore struct {
	mu    sync.Mutex
	snaps map[string][]*warrant.View // proposition -> snapshots, oldest first
	fail  error                      // when set, every call fails with it
}

func newFakeStore() *fakeStore { return &fakeStore{snaps: map[string][]*warrant.View{}} }

// clone round-trips v through its stored form, as a real store would.
func clone(v *warrant.View) *warrant.View {
	c, err := warrant.DecodeView(warrant.Encode(v))
	if err != nil {
		panic("fake store: stored view does not decode: " + err.Error())
	}
	return c
}

func (f *fakeStore) Latest(_ context.Context, pid string) (*warrant.View, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	s := f.snaps[pid]
	if len(s) == 0 {
		return nil, ErrNotFound
	}
	return clone(s[len(s)-1]), nil
}

func (f *fakeStore) Get(_ context.Context, pid, vid string) (*warrant.View, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	for _, v := range f.snaps[pid] {
		if v.ViewID == vid {
			return clone(v), nil
		}
	}
	return nil, ErrNotFound
}

func (f *fakeStore) List(_ context.Context, query string, limit int) ([]PropositionSummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	var out []PropositionSummary
	for pid, s := range f.snaps {
		latest := s[len(s)-1]
		hit := PropositionSummary{PropositionID: pid, LatestViewID: latest.ViewID, Texts: []string{}}
		match := contains(pid, query)
		for _, a := range latest.Assertions {
			hit.Texts = append(hit.Texts, a.Text)
			match = match || contains(a.Text, query)
		}
		if match {
			out = append(out, hit)
		}
	}
	slices.SortFunc(out, func(a, b PropositionSummary) int { return strings.Compare(a.PropositionID, b.PropositionID) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func contains(s, q string) bool { return strings.Contains(strings.ToLower(s), strings.ToLower(q)) }

func (f *fakeStore) Put(_ context.Context, v *warrant.View) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return false, f.fail
	}
	for _, old := range f.snaps[v.PropositionID] {
		if old.ViewID != v.ViewID {
			continue
		}
		if bytes.Equal(warrant.Encode(old), warrant.Encode(v)) {
			return false, nil
		}
		return false, &warrant.Error{Code: warrant.CodeImmutableRecord, Field: "view_id",
			Rule: "snapshot " + v.ViewID + " is already stored with different content"}
	}
	f.snaps[v.PropositionID] = append(f.snaps[v.PropositionID], clone(v))
	return true, nil
}

func (f *fakeStore) AppendEvidence(_ context.Context, pid string, e EvidenceInput) (*warrant.View, error) {
	return f.appendTo(pid, func(v *warrant.View) {
		v.Evidence = append(v.Evidence, e.Evidence)
		if e.Assertion != nil {
			v.Assertions = append(v.Assertions, *e.Assertion)
		}
	})
}

func (f *fakeStore) AppendCheck(_ context.Context, pid string, c CheckInput) (*warrant.View, error) {
	return f.appendTo(pid, func(v *warrant.View) { v.Checks = append(v.Checks, c.Check) })
}

// appendTo makes latest+record a new snapshot under its derived id, and
// validates it the way the kernel would read it back.
func (f *fakeStore) appendTo(pid string, add func(*warrant.View)) (*warrant.View, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	s := f.snaps[pid]
	if len(s) == 0 {
		return nil, ErrNotFound
	}
	next := clone(s[len(s)-1])
	add(next)
	next.ViewID = warrant.DerivedViewID(next)
	checked, err := warrant.DecodeView(warrant.Encode(next))
	if err != nil {
		return nil, err
	}
	f.snaps[pid] = append(f.snaps[pid], checked)
	return clone(checked), nil
}

func (f *fakeStore) count(pid string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.snaps[pid])
}

var errDiskOnFire = errors.New("disk on fire")
