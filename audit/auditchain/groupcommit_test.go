package auditchain

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// A refused op keeps its own error and the others commit; an op that
// leaves the transaction in doubt fails every op of its batch that was not
// refused, with the transaction's error.
func TestGroupCommitErrors(t *testing.T) {
	refused := errors.New("refused")
	broken := errors.New("statement failed")
	g := StartGroupCommit(8, 0, func(ops []string, errs []error) error {
		for i, op := range ops {
			switch op {
			case "refuse":
				errs[i] = refused
			case "break":
				errs[i] = InDoubt(broken)
				return broken
			}
		}
		return nil
	})
	defer g.Stop()
	ctx := context.Background()
	if err := g.Submit(ctx, "ok"); err != nil {
		t.Fatalf("ok: %v", err)
	}
	if err := g.Submit(ctx, "refuse"); !errors.Is(err, refused) {
		t.Fatalf("refuse: got %v, want %v", err, refused)
	}
	if err := g.Submit(ctx, "break"); !errors.Is(err, broken) {
		t.Fatalf("break: got %v, want %v", err, broken)
	}
}

// Concurrent submitters share commits, every write is answered, and a
// write after Stop is refused with ErrClosed.
func TestGroupCommitBatchesAndStops(t *testing.T) {
	const n = 64
	var mu sync.Mutex
	seen := 0
	g := StartGroupCommit(16, 0, func(ops []int, errs []error) error {
		mu.Lock()
		seen += len(ops)
		mu.Unlock()
		if len(ops) > 16 {
			return errors.New("batch over maxBatch")
		}
		return nil
	})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.Submit(context.Background(), i); err != nil {
				t.Errorf("submit %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	g.Stop()
	commits, writes := g.Stats()
	if writes != n || seen != n {
		t.Fatalf("writes = %d, ops run = %d, want %d", writes, seen, n)
	}
	if commits < 1 || commits > n {
		t.Fatalf("commits = %d", commits)
	}
	if err := g.Submit(context.Background(), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Stop: got %v, want ErrClosed", err)
	}
}

// A write announced by Expect joins the commit of a write already queued
// when it comes within the linger; a write nothing announced is committed
// at once; and an expectation met by Done ends the wait.
func TestGroupCommitLingersForExpectedWrites(t *testing.T) {
	const linger = 5 * time.Second // long: only the rules may end the wait
	var mu sync.Mutex
	var batches [][]string
	g := StartGroupCommit(16, linger, func(ops []string, errs []error) error {
		mu.Lock()
		batches = append(batches, append([]string(nil), ops...))
		mu.Unlock()
		return nil
	})
	defer g.Stop()
	ctx := context.Background()

	start := time.Now()
	if err := g.Submit(ctx, "alone"); err != nil || time.Since(start) > time.Second {
		t.Fatalf("a write nothing announced waited %v (%v)", time.Since(start), err)
	}

	first, second := g.Expect(), g.Expect()
	done := make(chan error, 1)
	go func() { done <- g.Submit(audit.WithExpectation(ctx, first), "first") }()
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("committed while another write was announced (%v)", err)
	default:
	}
	if err := g.Submit(audit.WithExpectation(ctx, second), "second"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	third, never := g.Expect(), g.Expect()
	go func() { done <- g.Submit(audit.WithExpectation(ctx, third), "third") }()
	time.Sleep(50 * time.Millisecond)
	never.Done() // the call ended without recording
	never.Done() // and meeting it twice counts once
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatal("the wait did not end when the last expectation was met without a write")
	}
	mu.Lock()
	defer mu.Unlock()
	want := [][]string{{"alone"}, {"first", "second"}, {"third"}}
	if !slices.EqualFunc(batches, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", batches, want)
	}
	if n := g.expected.Load(); n != 0 {
		t.Fatalf("%d expectations outstanding", n)
	}
}
