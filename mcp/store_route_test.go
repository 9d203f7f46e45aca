package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// TestStoreUnavailableIsNamed: a store failure that is its database being
// unreachable reaches the caller as EWP_STORE_UNAVAILABLE, with the
// cause and what to do, on a read and on may_act; any other failure
// stays internal (TestStoreFailureIsInternal).
func TestStoreUnavailableIsNamed(t *testing.T) {
	srv, st := newTestServer(t)
	c := dialInProcess(t, srv)
	st.fail = fmt.Errorf("%w: read latest: dial tcp 127.0.0.1:5432: connection refused", ErrStoreUnavailable)
	for _, tc := range []struct {
		tool string
		args obj
	}{
		{"warrant_now", obj{"proposition_id": "P-verified", "evaluated_at": "2026-09-14T00:00:00Z"}},
		{"may_act", obj{"proposition_id": "P-verified", "action": action(warrant.RiskLow, true)}},
	} {
		msg := mustRefuse(t, call(t, c, tc.tool, tc.args), CodeStoreUnavailable)
		if !strings.Contains(msg, "connection refused") || !strings.Contains(msg, "retry") {
			t.Errorf("%s: message %q", tc.tool, msg)
		}
	}
}

// actionSpy records, per Latest call, whether it was an action read.
type actionSpy struct {
	*fakeStore
	mu    sync.Mutex
	reads []bool
}

func (s *actionSpy) Latest(ctx context.Context, pid string) (*warrant.View, error) {
	s.mu.Lock()
	s.reads = append(s.reads, IsActionRead(ctx))
	s.mu.Unlock()
	return s.fakeStore.Latest(ctx, pid)
}

func (s *actionSpy) take() []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reads
	s.reads = nil
	return r
}

// TestMayActMarksItsReadForAction: may_act's read of the latest snapshot
// is marked as the read an action rests on (a store with a standby
// answers it from the primary); warrant_now's is not.
func TestMayActMarksItsReadForAction(t *testing.T) {
	spy := &actionSpy{fakeStore: seeded(t)}
	c := dialInProcess(t, New(spy, WithLogger(quietLogger())))
	mustOK(t, call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": action(warrant.RiskLow, true)}))
	if r := spy.take(); len(r) != 1 || !r[0] {
		t.Fatalf("may_act's reads: %v, want one action read", r)
	}
	mustOK(t, call(t, c, "warrant_now", obj{"proposition_id": "P-verified", "evaluated_at": "2026-09-14T00:00:00Z"}))
	if r := spy.take(); len(r) != 1 || r[0] {
		t.Fatalf("warrant_now's reads: %v, want one plain read", r)
	}
}
