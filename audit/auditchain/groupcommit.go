package auditchain

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is what a write submitted after the log was closed returns.
var ErrClosed = errors.New("the decision log is closed")

// TxError marks a failure in the middle of a batch's writes: the
// transaction is in doubt and the whole batch is rolled back. Any other
// error an op returns is a refusal that changed nothing.
type TxError struct{ Err error }

func (e *TxError) Error() string { return e.Err.Error() }
func (e *TxError) Unwrap() error { return e.Err }

// InDoubt wraps a failed statement of a batch as a *TxError (nil stays
// nil).
func InDoubt(err error) error {
	if err == nil {
		return nil
	}
	return &TxError{err}
}

// RunBatch runs a batch of ops in one transaction of a store. It sets
// errs[i] to op i's own answer (nil, a refusal, or a *TxError) and
// returns the transaction's failure, if any, which then fails every op
// that was not refused. The slices are reused after it returns. ctx ends
// at the latest deadline of the batch's submitters (never, if one has
// none): a store that stops answering (a frozen database) fails the
// batch then, rather than holding every caller and every later batch.
type RunBatch[Op any] func(ctx context.Context, ops []Op, errs []error) error

// GroupCommit is the writer both stores share: one goroutine takes every
// pending write off one channel, and whatever queued while the previous
// commit ran goes into the next transaction together, so 64 concurrent
// Records cost a handful of commits, not 64. Each caller waits for the
// commit of its own batch, so a write is durable when Submit returns. The
// store supplies what differs: how a batch runs in a transaction.
type GroupCommit[Op any] struct {
	run      RunBatch[Op]
	ops      chan pending[Op]
	maxBatch int
	quit     chan struct{}
	wg       sync.WaitGroup
	mu       sync.RWMutex // held shared by submitters, exclusively by Stop
	stopped  bool
	// commits and written count transactions and the writes they carried
	// (the tests check that concurrent writes share commits).
	commits, written atomic.Int64
}

type pending[Op any] struct {
	op   Op
	done chan error
	// ctx is the submitter's: its deadline bounds the batch (RunBatch).
	ctx context.Context
	// state is queued until the writer takes the op into a batch, or
	// the submitter gives up on it first (abandoned): exactly one of the
	// two happens, so an abandoned op is never written.
	state *atomic.Int32
}

const (
	queued int32 = iota
	taken
	abandoned
)

// StartGroupCommit starts the writer goroutine; batches hold at most
// maxBatch ops.
func StartGroupCommit[Op any](maxBatch int, run RunBatch[Op]) *GroupCommit[Op] {
	g := &GroupCommit[Op]{run: run, ops: make(chan pending[Op], 4*maxBatch), maxBatch: maxBatch, quit: make(chan struct{})}
	g.wg.Add(1)
	go g.loop()
	return g
}

// Submit queues op and waits for the commit of its batch; its answer is
// exact: nil means committed, an error that nothing of op was. An op
// whose ctx has ended is never written: Submit refuses it before
// queueing, and gives up on it with ctx's error while it waits in the
// queue (a writer stuck on an earlier batch, a frozen database). Once the
// writer has taken it into a batch, Submit waits for that batch's commit
// even when ctx ends meanwhile.
func (g *GroupCommit[Op]) Submit(ctx context.Context, op Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p := pending[Op]{op: op, ctx: ctx, done: make(chan error, 1), state: new(atomic.Int32)}
	g.mu.RLock()
	if g.stopped {
		g.mu.RUnlock()
		return ErrClosed
	}
	select {
	case g.ops <- p:
	case <-ctx.Done():
		g.mu.RUnlock()
		return ctx.Err()
	}
	g.mu.RUnlock()
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		if p.state.CompareAndSwap(queued, abandoned) {
			return ctx.Err()
		}
		return <-p.done
	}
}

// Stats returns how many transactions committed and how many writes they
// carried.
func (g *GroupCommit[Op]) Stats() (commits, writes int64) {
	return g.commits.Load(), g.written.Load()
}

// Stop lets queued writes commit and ends the goroutine.
func (g *GroupCommit[Op]) Stop() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
	close(g.quit)
	g.wg.Wait()
}

func (g *GroupCommit[Op]) loop() {
	defer g.wg.Done()
	batch := make([]pending[Op], 0, g.maxBatch)
	ops := make([]Op, 0, g.maxBatch)
	for {
		select {
		case p := <-g.ops:
			batch = g.gather(append(batch[:0], p))
			ops = g.commit(batch, ops)
		case <-g.quit:
			// Stop holds the lock, so nothing more arrives: drain.
			for {
				select {
				case p := <-g.ops:
					batch = g.gather(append(batch[:0], p))
					ops = g.commit(batch, ops)
				default:
					return
				}
			}
		}
	}
}

// gather fills the batch with what is queued, then yields the processor
// once and goes on while that brought more: callers woken by the previous
// commit are about to submit again, and a commit costs as much as many
// records (a disk flush, or round trips), so letting them catch up beats
// committing them one by one. A lone caller waits one yield. (Waiting
// longer, up to 2 ms for the calls being judged, gave batches twice as
// large but no fewer CPU per call nor more calls/s in the real server,
// and was taken out.)
func (g *GroupCommit[Op]) gather(batch []pending[Op]) []pending[Op] {
	for {
	drain:
		for len(batch) < g.maxBatch {
			select {
			case p := <-g.ops:
				batch = append(batch, p)
			default:
				break drain
			}
		}
		if len(batch) >= g.maxBatch {
			return batch
		}
		runtime.Gosched()
		if len(g.ops) == 0 {
			return batch
		}
	}
}

// batchContext ends at the latest deadline of the batch's submitters, or
// never when one of them has none.
func batchContext[Op any](batch []pending[Op]) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, p := range batch {
		dl, ok := p.ctx.Deadline()
		if !ok {
			return context.Background(), func() {}
		}
		if dl.After(latest) {
			latest = dl
		}
	}
	return context.WithDeadline(context.Background(), latest)
}

// commit runs a batch in one transaction and answers its callers. An op
// that is refused (a duplicate idempotency key, a used approval) has
// changed nothing and the others still commit; a failure inside an op's
// writes, or of the commit, fails the whole batch. It returns ops for
// reuse.
func (g *GroupCommit[Op]) commit(batch []pending[Op], ops []Op) []Op {
	batch = slices.DeleteFunc(batch, func(p pending[Op]) bool { return !p.state.CompareAndSwap(queued, taken) })
	if len(batch) == 0 {
		return ops
	}
	g.commits.Add(1)
	g.written.Add(int64(len(batch)))
	ops = ops[:0]
	for _, p := range batch {
		ops = append(ops, p.op)
	}
	errs := make([]error, len(batch))
	ctx, cancel := batchContext(batch)
	err := g.run(ctx, ops, errs)
	cancel()
	for i, p := range batch {
		if err != nil {
			var te *TxError
			if errs[i] == nil || errors.As(errs[i], &te) {
				errs[i] = err
			}
		}
		p.done <- errs[i]
	}
	clear(ops) // drop the closures and rows until the next batch
	return ops
}
