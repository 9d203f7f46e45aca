package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ewp-go/ewp/warrant"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// countingStore records how many Latest calls run at once.
type countingStore struct {
	*fakeStore
	delay        time.Duration
	running, max atomic.Int32
}

func (s *countingStore) Latest(ctx context.Context, pid string) (*warrant.View, error) {
	n := s.running.Add(1)
	for {
		m := s.max.Load()
		if n <= m || s.max.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(s.delay)
	s.running.Add(-1)
	return s.fakeStore.Latest(ctx, pid)
}

// warrantNowCall calls warrant_now on srv through a client of its own. It
// returns every failure, the client's included, instead of stopping the
// test: the tests call it from worker goroutines.
func warrantNowCall(srv *Server) (*mcpgo.CallToolResult, error) {
	c, err := clientInProcess(srv)
	if err != nil {
		return nil, fmt.Errorf("connecting a client in process: %w", err)
	}
	defer c.Close()
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "warrant_now"
	req.Params.Arguments = map[string]any{"proposition_id": "P-verified", "evaluated_at": testT}
	return c.CallTool(context.Background(), req)
}

// With a cap of 2, eight concurrent slow calls never evaluate more than two
// at once, and all are answered.
func TestMaxConcurrentCallsCapsEvaluations(t *testing.T) {
	st := &countingStore{fakeStore: seeded(t), delay: 50 * time.Millisecond}
	srv := New(st, WithClock(func() time.Time { return testNow }), WithLogger(quietLogger()), WithMaxConcurrentCalls(2))
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := warrantNowCall(srv)
			if err != nil || res.IsError {
				errs <- fmtResult(res, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := st.max.Load(); got > 2 || got < 1 {
		t.Fatalf("%d calls evaluated at once with --max-concurrent-calls 2", got)
	}
}

// A call that finds every slot busy until its deadline is refused with
// EWP_REFUSE_TIMEOUT, naming the flag that raises the cap.
func TestMaxConcurrentCallsWaitEndsAtDeadline(t *testing.T) {
	st := &countingStore{fakeStore: seeded(t), delay: 600 * time.Millisecond}
	srv := New(st, WithClock(func() time.Time { return testNow }), WithLogger(quietLogger()),
		WithMaxConcurrentCalls(1), WithRequestTimeout(300*time.Millisecond))
	// first holds the only slot; what it answers is not the point, but a
	// failure to even connect is reported, and ends the wait for it.
	first := make(chan error, 1)
	go func() {
		_, err := warrantNowCall(srv)
		first <- err
	}()
	for st.running.Load() == 0 {
		select {
		case err := <-first:
			t.Fatalf("the call meant to hold the slot ended before reaching the store: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	res, err := warrantNowCall(srv)
	got := fmtResult(res, err)
	if !strings.Contains(got, CodeTimeout) || !strings.Contains(got, "--max-concurrent-calls") {
		t.Fatalf("call waiting for a busy slot: %s", got)
	}
	if err := <-first; err != nil && !strings.Contains(err.Error(), CodeTimeout) {
		t.Errorf("the call holding the slot: %v", err)
	}
}

func fmtResult(res *mcpgo.CallToolResult, err error) string {
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcpgo.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
