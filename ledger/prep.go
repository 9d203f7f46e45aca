package ledger

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ewp-go/ewp/warrant"
)

// prepChunk is the unit of parallel preparation. Workers take chunks in
// order, so the single writer rarely waits for the view it needs next.
const prepChunk = 256

// prepQueue encodes and fingerprints views on every core while the write
// transaction consumes them in order: SQLite writes are single-threaded,
// the JSON and hashing work is not.
type prepQueue struct {
	views   []*warrant.View
	out     []*prepared
	done    []chan struct{}
	next    atomic.Int64
	stopped atomic.Bool
	wg      sync.WaitGroup
}

func prepareAll(views []*warrant.View) *prepQueue {
	n := (len(views) + prepChunk - 1) / prepChunk
	q := &prepQueue{views: views, out: make([]*prepared, len(views)), done: make([]chan struct{}, n)}
	for i := range q.done {
		q.done[i] = make(chan struct{})
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	if len(views) < prepChunk {
		workers = 0 // small writes: prepare inline in get, no goroutines
	}
	for range workers {
		q.wg.Add(1)
		go q.work()
	}
	return q
}

func (q *prepQueue) work() {
	defer q.wg.Done()
	for {
		c := int(q.next.Add(1) - 1)
		if c >= len(q.done) || q.stopped.Load() {
			return
		}
		end := min((c+1)*prepChunk, len(q.views))
		for i := c * prepChunk; i < end; i++ {
			q.out[i] = prepare(q.views[i])
		}
		close(q.done[c])
	}
}

// get returns the prepared view i, waiting for its chunk if needed.
func (q *prepQueue) get(i int) *prepared {
	if len(q.views) < prepChunk {
		return prepare(q.views[i])
	}
	<-q.done[i/prepChunk]
	return q.out[i]
}

// stop ends the workers early (after a refusal) and waits for them, so no
// goroutine outlives the call that started it.
func (q *prepQueue) stop() {
	q.stopped.Store(true)
	q.wg.Wait()
}
