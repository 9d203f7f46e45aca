package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"cmp"
	"context"
	"errors"
	"io"
	"runtime"
	"sync"

	"github.com/ewp-go/ewp/warrant"
)

// PutStream is PutEach for a source of unknown length, in bounded memory:
// views are produced and prepared on every core at most streamAhead chunks
// and streamAheadBytes of text ahead of the writer, and outcomes are
// passed to Stream.Stored instead of being collected (PutResult.Views
// stays nil). The batch is one transaction, all or nothing, like Put's.
// View returning (nil, nil) skips the item.
//
// A refusal by the §9 rules is found before anything of the view is
// written, so Stream.Refused can let the batch go on without it.
func (l *Ledger) PutStream(ctx context.Context, s ledger.Stream) (ledger.PutResult, error) {
	var res ledger.PutResult
	f := startFeed(s.Next, l.maxBody)
	defer f.stop()
	err := l.write(ctx, func(w *wtx) error {
		end, err := f.each(func(i int, j *streamJob) (bool, error) { return l.putJob(w, s, i, j, &res) })
		if err != nil || (end != nil && !errors.Is(end, io.EOF)) {
			return cmp.Or(err, end)
		}
		if s.Commit != nil {
			return s.Commit()
		}
		return nil
	})
	if err != nil {
		return ledger.PutResult{}, err
	}
	return res, nil
}

// putJob stores one prepared item; end is set when the batch ends there.
func (l *Ledger) putJob(w *wtx, s ledger.Stream, i int, j *streamJob, res *ledger.PutResult) (end bool, err error) {
	refusal := j.err
	if refusal == nil && j.p != nil {
		out, err := w.store(j.p)
		var we *warrant.Error
		switch {
		case err == nil:
			out.Index = i
			res.Stored, res.Unchanged = res.Stored+b2i(out.Stored), res.Unchanged+b2i(!out.Stored)
			if s.Stored != nil {
				s.Stored(j.it, out)
			}
			return false, nil
		case errors.As(err, &we):
			refusal = err
		default:
			return true, &ledger.BatchError{Index: i, Err: err}
		}
	}
	if refusal == nil {
		return false, nil // skipped by its producer
	}
	if s.Refused == nil {
		return true, &ledger.BatchError{Index: i, Err: refusal}
	}
	switch r := s.Refused(j.it, refusal); {
	case r == nil:
		return false, nil
	case errors.Is(r, io.EOF):
		return true, nil
	default:
		return true, r
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// How far producing may run ahead of the writer: enough to keep every
// core busy, bounded in views and in bytes of text so that a stream of
// large views cannot fill memory while the writer is busy. Items travel
// in chunks, so goroutines hand over work once per chunk, not per view.
// A chunk closes at streamChunk views or streamChunkBytes of text, so
// that large views still spread over the workers in small pieces.
const (
	streamAhead      = 32 // chunks
	streamAheadBytes = 16 << 20
	streamChunk      = 64
	streamChunkBytes = 512 << 10
)

type streamJob struct {
	it   ledger.StreamItem
	size int
	p    *prepared
	err  error
}

// chunk is consecutive items, prepared by one worker; end, when set, is
// Next's error after them (io.EOF at the end of the source).
type chunk struct {
	jobs  []streamJob
	bytes int
	end   error
	done  chan struct{}
}

// feed calls Next on its own goroutine and prepares items on every core,
// handing them to the writer in order.
type feed struct {
	next  func() (ledger.StreamItem, error)
	max   int64       // the largest stored body (Options.MaxViewBytes)
	order chan *chunk // in input order, for the writer
	work  chan *chunk // for the workers
	quit  chan struct{}
	mu    sync.Mutex
	cond  *sync.Cond
	bytes int // text of the items handed out and not yet written
	wg    sync.WaitGroup
}

func startFeed(next func() (ledger.StreamItem, error), max int64) *feed {
	f := &feed{next: next, max: max, order: make(chan *chunk, streamAhead), work: make(chan *chunk, streamAhead), quit: make(chan struct{})}
	f.cond = sync.NewCond(&f.mu)
	f.wg.Add(1)
	go f.produce()
	for range runtime.GOMAXPROCS(0) {
		f.wg.Add(1)
		go f.prepare()
	}
	return f
}

func (f *feed) produce() {
	defer f.wg.Done()
	defer close(f.work)
	c := &chunk{done: make(chan struct{})}
	for {
		it, err := f.next()
		if err != nil {
			c.end = err
			f.send(c)
			return
		}
		n := it.Size()
		if !f.reserve(n, false) { // the writer frees room only for chunks it has
			if !f.send(c) || !f.reserve(n, true) {
				return
			}
			c = &chunk{done: make(chan struct{})}
		}
		c.jobs = append(c.jobs, streamJob{it: it, size: n})
		if c.bytes += n; len(c.jobs) == streamChunk || c.bytes >= streamChunkBytes {
			if !f.send(c) {
				return
			}
			c = &chunk{done: make(chan struct{})}
		}
	}
}

// send hands a chunk to the writer and a worker; false when stopping.
func (f *feed) send(c *chunk) bool {
	for _, ch := range []chan *chunk{f.order, f.work} {
		select {
		case ch <- c:
		case <-f.quit:
			return false
		}
	}
	return true
}

// reserve counts n more bytes as prepared ahead, waiting (when wait is
// set) until there is room, which there always is when nothing is ahead;
// false when there is none, or the feed is stopping.
func (f *feed) reserve(n int, wait bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.bytes > 0 && f.bytes+n > streamAheadBytes {
		if !wait {
			return false
		}
		select {
		case <-f.quit:
			return false
		default:
		}
		f.cond.Wait()
	}
	f.bytes += n
	return true
}

func (f *feed) release(n int) {
	f.mu.Lock()
	f.bytes -= n
	f.mu.Unlock()
	f.cond.Broadcast()
}

func (f *feed) prepare() {
	defer f.wg.Done()
	for c := range f.work {
		for k := range c.jobs {
			j := &c.jobs[k]
			v, err := j.it.View()
			if err == nil && v != nil {
				j.p, err = prepare(v, f.max)
			}
			j.err = err
		}
		close(c.done)
	}
}

// each calls fn with every item in order once it is prepared, until fn
// ends the batch or returns an error; end is Next's error that ended the
// source, if it came to that.
func (f *feed) each(fn func(i int, j *streamJob) (bool, error)) (end error, err error) {
	for i := 0; ; {
		c := <-f.order
		<-c.done
		size := 0
		for k := range c.jobs {
			j := &c.jobs[k]
			size += j.size
			stop, err := fn(i, j)
			i++
			c.jobs[k] = streamJob{} // written: garbage for the collector, not live heap
			if err != nil || stop {
				return nil, err
			}
		}
		f.release(size)
		if c.end != nil {
			return c.end, nil
		}
	}
}

// stop ends the producer and the workers and waits for them.
func (f *feed) stop() {
	close(f.quit)
	f.mu.Lock()
	f.cond.Broadcast()
	f.mu.Unlock()
	f.wg.Wait()
}
