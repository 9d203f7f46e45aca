package auditchain

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// A refused op keeps its own error and the others commit; an op that
// leaves the transaction in doubt fails every op of its batch that was not
// refused, with the transaction's error.
func TestGroupCommitErrors(t *testing.T) {
	refused := errors.New("refused")
	broken := errors.New("statement failed")
	g := StartGroupCommit(8, func(_ context.Context, ops []string, errs []error) error {
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
	g := StartGroupCommit(16, func(_ context.Context, ops []int, errs []error) error {
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

// Stop, called while writes wait in the queue behind a batch the writer
// is still committing, commits every one of them before it returns: each
// submitter gets nil and each write runs exactly once.
func TestGroupCommitStopCommitsQueuedWrites(t *testing.T) {
	const n = 50
	taken, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	ran := map[int]int{}
	g := StartGroupCommit(16, func(_ context.Context, ops []int, errs []error) error {
		if ops[0] == 0 {
			close(taken)
			<-release
		}
		mu.Lock()
		for _, op := range ops {
			ran[op]++
		}
		mu.Unlock()
		return nil
	})
	answers := make(chan error, n)
	go func() { answers <- g.Submit(context.Background(), 0) }()
	<-taken // the writer holds the batch {0}; the others queue behind it
	for i := 1; i < n; i++ {
		go func() { answers <- g.Submit(context.Background(), i) }()
	}
	waitQueued(t, g, n-1)
	stopped := make(chan struct{})
	go func() { g.Stop(); close(stopped) }()
	waitStopping(t, g)
	close(release)
	<-stopped
	for i := range n {
		select {
		case err := <-answers:
			if err != nil {
				t.Errorf("a write queued before Stop: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d writes queued before Stop never answered", n-i, n)
		}
	}
	for i := range n {
		if ran[i] != 1 {
			t.Errorf("write %d ran %d times, want once", i, ran[i])
		}
	}
}

// waitQueued waits until n writes wait in g's queue.
func waitQueued[Op any](t *testing.T, g *GroupCommit[Op], n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); len(g.ops) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued after 30 s, want %d", len(g.ops), n)
		}
	}
}

// waitStopping waits until Stop has closed g to new writes.
func waitStopping[Op any](t *testing.T, g *GroupCommit[Op]) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		g.mu.RLock()
		stopped := g.stopped
		g.mu.RUnlock()
		if stopped {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("Stop did not close the queue within 30 s")
		}
	}
}

// A write whose context ended before it was submitted is never queued:
// however often it is tried (a select between a free queue and an ended
// context picks either), nothing runs.
func TestGroupCommitRefusesAnEndedContext(t *testing.T) {
	var mu sync.Mutex
	ran := 0
	g := StartGroupCommit(8, func(_ context.Context, ops []string, errs []error) error {
		mu.Lock()
		ran += len(ops)
		mu.Unlock()
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 200 {
		if err := g.Submit(ctx, "late"); !errors.Is(err, context.Canceled) {
			t.Fatalf("submit on an ended context: got %v, want context.Canceled", err)
		}
	}
	g.Stop()
	if ran != 0 {
		t.Fatalf("%d writes of ended contexts ran", ran)
	}
}

// A write still queued when its context ends (the writer is stuck on an
// earlier batch, as on a frozen database) is given up at once with the
// context's error, and is then never written; one the writer has taken
// is waited for.
func TestGroupCommitGivesUpAQueuedWrite(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var ran []string
	taken := make(chan struct{})
	g := StartGroupCommit(1, func(_ context.Context, ops []string, errs []error) error {
		if ops[0] == "stuck" {
			close(taken)
			<-release
		}
		mu.Lock()
		ran = append(ran, ops...)
		mu.Unlock()
		return nil
	})
	stuck := make(chan error)
	go func() { stuck <- g.Submit(context.Background(), "stuck") }()
	<-taken // the writer took "stuck" and blocks
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := g.Submit(ctx, "late"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a queued write past its deadline: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("gave up after %v", took)
	}
	close(release)
	if err := <-stuck; err != nil {
		t.Fatalf("the taken write: %v", err)
	}
	if err := g.Submit(context.Background(), "after"); err != nil {
		t.Fatal(err)
	}
	g.Stop()
	if strings.Join(ran, " ") != "stuck after" {
		t.Fatalf("written: %v; the abandoned write must not be", ran)
	}
}

// A batch runs on a context that ends at its submitters' latest
// deadline, so a store that stops answering fails it then; with a
// submitter without deadline it never ends.
func TestGroupCommitBatchContext(t *testing.T) {
	deadlines := make(chan bool, 2)
	g := StartGroupCommit(8, func(ctx context.Context, ops []string, errs []error) error {
		_, ok := ctx.Deadline()
		deadlines <- ok
		if ok {
			<-ctx.Done() // a frozen store
			return ctx.Err()
		}
		return nil
	})
	defer g.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := g.Submit(ctx, "frozen"); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("a batch on a store that does not answer: %v after %v", err, time.Since(start))
	}
	if !<-deadlines {
		t.Fatal("the batch ran without its submitter's deadline")
	}
	if err := g.Submit(context.Background(), "plain"); err != nil || <-deadlines {
		t.Fatalf("a submitter without deadline: %v", err)
	}
}
