package mcp

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/warrant"
)

// frozenLog stands for a decision log on a frozen database (SIGSTOP):
// nothing is written until thaw is closed, and a write gives up when its
// context ends before then, having written nothing (as a write still
// queued in the group commit does).
type frozenLog struct {
	*memlog.Log
	thaw chan struct{}
}

func (l frozenLog) wait(ctx context.Context) error {
	select {
	case <-l.thaw:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l frozenLog) Record(ctx context.Context, d *audit.Decision) error {
	if err := l.wait(ctx); err != nil {
		return err
	}
	return l.Log.Record(ctx, d)
}

func (l frozenLog) RecordUse(ctx context.Context, d *audit.Decision) error {
	if err := l.wait(ctx); err != nil {
		return err
	}
	return l.Log.RecordUse(ctx, d)
}

// With the decision log frozen, may_act answers EWP_REFUSE_TIMEOUT at the
// promised deadline (not after a further recording grace), grants
// nothing, and its refusal is recorded once the log thaws, under the
// decision_id the answer names.
func TestMayActAnswersAtTheDeadlineWithTheLogFrozen(t *testing.T) {
	ml := memlog.New(func() time.Time { return testNow })
	frozen := frozenLog{ml, make(chan struct{})}
	const deadline = 300 * time.Millisecond
	srv, _ := newTestServer(t, WithDecisionLog(DecisionLog{Log: frozen}), WithRequestTimeout(deadline))
	c := dialStdio(t, srv, false)
	start := time.Now()
	got := call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": action(warrant.RiskLow, true)})
	took := time.Since(start)
	if got.code != CodeTimeout {
		t.Fatalf("want %s, got %+v", CodeTimeout, got)
	}
	if took > deadline+time.Second {
		t.Fatalf("answered after %v with a %v deadline", took, deadline)
	}
	var id string
	if _, err := fmt.Sscanf(got.msg[strings.Index(got.msg, "recorded as decision ")+len("recorded as decision "):], "%36s", &id); err != nil {
		t.Fatalf("the answer names no decision: %q", got.msg)
	}
	close(frozen.thaw)
	var rec *audit.Decision
	for range 100 {
		var err error
		if rec, err = ml.Decision(context.Background(), id); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if rec == nil || rec.Outcome != audit.OutcomeRefused || rec.Code != CodeTimeout || rec.PropositionID != "P-verified" {
		t.Fatalf("the refusal's record once the log thawed: %+v", rec)
	}
}

// With the ledger frozen instead (an evaluation that never returns),
// may_act answers EWP_REFUSE_TIMEOUT at the deadline and its refusal is
// already on record when it is answered: the evaluation is stopped
// early enough to leave the record its time.
func TestMayActTimeoutIsRecordedByTheDeadline(t *testing.T) {
	ml := memlog.New(func() time.Time { return testNow })
	const deadline = 300 * time.Millisecond
	srv := New(slowLatest{slowStore{seeded(t), 5 * time.Second}}, WithClock(func() time.Time { return testNow }),
		WithLogger(quietLogger()), WithDecisionLog(DecisionLog{Log: ml}), WithRequestTimeout(deadline))
	c := dialStdio(t, srv, false)
	start := time.Now()
	got := call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": action(warrant.RiskLow, true)})
	if took := time.Since(start); got.code != CodeTimeout || took > deadline+time.Second {
		t.Fatalf("answer %+v after %v, want %s by %v", got, took, CodeTimeout, deadline)
	}
	refusals, err := ml.List(context.Background(), audit.Filter{Outcome: audit.OutcomeRefused})
	if err != nil || len(refusals) != 1 || refusals[0].Code != CodeTimeout {
		t.Fatalf("the refusal was not on record when answered: %+v %v", refusals, err)
	}
}

// slowLatest is a ledger whose snapshot reads take the slow store's
// delay.
type slowLatest struct{ slowStore }

func (s slowLatest) Latest(ctx context.Context, pid string) (*warrant.View, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.fakeStore.Latest(ctx, pid)
}

// deadlineStore fails its reads on a deadline of its own (a PostgreSQL
// connect timeout) long before the request's.
type deadlineStore struct {
	*fakeStore
	after time.Duration
}

func (s deadlineStore) Latest(ctx context.Context, pid string) (*warrant.View, error) {
	time.Sleep(s.after)
	return nil, fmt.Errorf("failed to connect to `host=/run/postgresql`: timeout: %w", context.DeadlineExceeded)
}

// warrant_now refused for the store's own timeout says so, and after how
// long, instead of naming the request deadline it did not reach.
func TestStoreTimeoutNamesTheDeadlineThatPassed(t *testing.T) {
	srv := New(deadlineStore{seeded(t), 50 * time.Millisecond}, WithClock(func() time.Time { return testNow }),
		WithLogger(quietLogger()), WithRequestTimeout(10*time.Second))
	c := dialStdio(t, srv, false)
	got := call(t, c, "warrant_now", obj{"proposition_id": "P-verified", "evaluated_at": "2026-09-21T18:00:00Z"})
	if got.code != CodeTimeout {
		t.Fatalf("want %s, got %+v", CodeTimeout, got)
	}
	// The store gave up after 50 ms plus however long a loaded machine
	// took to schedule it: the message must name that time, well short of
	// the request's 10 s.
	m := regexp.MustCompile(`gave up after (\d+)ms`).FindStringSubmatch(got.msg)
	if strings.Contains(got.msg, "took longer than") || !strings.Contains(got.msg, "its own time limit") || m == nil {
		t.Fatalf("the message does not state the deadline that passed (the store's, after ~50ms): %q", got.msg)
	}
	if ms, _ := strconv.Atoi(m[1]); ms < 50 || ms >= 5000 {
		t.Fatalf("the message names %d ms; the store gave up after 50 ms: %q", ms, got.msg)
	}
}
