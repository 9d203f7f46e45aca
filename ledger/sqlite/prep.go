package sqlite

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ewp-go/ewp/warrant"
)

// prepChunk is the unit of parallel preparation. Workers take chunks in
// order, so the single writer rarely waits for the view it needs next.
const prepChunk = 256

// prepAhead bounds how many chunks workers may prepare ahead of the
// writer. Preparing is faster than writing; unbounded, a large load would
// hold every decoded view and body in memory at once, and the collector
// and the kernel's page zeroing would eat the time saved.
const prepAhead = 16

// prepQueue produces, encodes and fingerprints views on every core while
// the write transaction consumes them in order: SQLite writes are
// single-threaded, the decoding, JSON and hashing work is not.
type prepQueue struct {
	n       int
	max     int64 // Options.MaxViewBytes, resolved
	src     func(i int) (*warrant.View, error)
	out     []*prepared
	errs    []error
	done    []chan struct{}
	ahead   chan struct{} // one token per chunk prepared but not yet written
	next    atomic.Int64
	stopped atomic.Bool
	wg      sync.WaitGroup
}

func prepareAll(n int, max int64, src func(i int) (*warrant.View, error)) *prepQueue {
	chunks := (n + prepChunk - 1) / prepChunk
	q := &prepQueue{n: n, max: max, src: src, out: make([]*prepared, n), errs: make([]error, n),
		done: make([]chan struct{}, chunks), ahead: make(chan struct{}, prepAhead)}
	for i := range q.done {
		q.done[i] = make(chan struct{})
	}
	if n < prepChunk {
		return q // small writes: prepare inline in get, no goroutines
	}
	for range min(runtime.GOMAXPROCS(0), chunks) {
		q.wg.Add(1)
		go q.work()
	}
	return q
}

func (q *prepQueue) work() {
	defer q.wg.Done()
	for {
		q.ahead <- struct{}{}
		c := int(q.next.Add(1) - 1)
		if c >= len(q.done) || q.stopped.Load() {
			select { // give the token back, unless stop took it already
			case <-q.ahead:
			default:
			}
			return
		}
		for i := c * prepChunk; i < min((c+1)*prepChunk, q.n); i++ {
			q.out[i], q.errs[i] = q.one(i)
		}
		close(q.done[c])
	}
}

func (q *prepQueue) one(i int) (*prepared, error) {
	v, err := q.src(i)
	if err != nil || v == nil {
		return nil, err
	}
	return prepare(v, q.max)
}

// get returns view i prepared (nil when the source skipped it), waiting
// for its chunk if needed.
func (q *prepQueue) get(i int) (*prepared, error) {
	if q.n < prepChunk {
		return q.one(i)
	}
	<-q.done[i/prepChunk]
	return q.out[i], q.errs[i]
}

// release drops the queue's reference to view i once the writer has it,
// and lets the workers move on when it was the last of its chunk.
func (q *prepQueue) release(i int) {
	if q.n < prepChunk {
		return
	}
	q.out[i] = nil
	if i%prepChunk == prepChunk-1 || i == q.n-1 {
		<-q.ahead
	}
}

// stop ends the workers early (after a refusal) and waits for them, so no
// goroutine outlives the call that started it.
func (q *prepQueue) stop() {
	q.stopped.Store(true)
	done := make(chan struct{})
	go func() {
		q.wg.Wait()
		close(done)
	}()
	for {
		select {
		case <-q.ahead: // unblock workers waiting for a token
		case <-done:
			return
		}
	}
}
