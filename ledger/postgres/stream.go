package postgres

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/warrant"
)

// PutStream is the SQLite ledger's PutStream (see ledger.Stream): a batch
// of unknown length, one transaction, all or nothing, in bounded memory.
// Items are read from Next and prepared on every core a chunk at a time,
// at most three chunks (streamChunk views, streamChunkBytes of text each)
// ahead of the writer; outcomes go to Stream.Stored (PutResult.Views stays
// nil). A §9 refusal is found before anything of the view is queued, so
// Stream.Refused can let the batch go on without it.
func (l *Ledger) PutStream(ctx context.Context, s ledger.Stream) (ledger.PutResult, error) {
	var res ledger.PutResult
	chunks, stop := l.feedStream(s.Next)
	defer stop()
	err := l.write(ctx, func(w *wtx) error {
		for c := range chunks {
			end, err := w.storeStream(s, c, &res)
			if err != nil {
				return err
			}
			if end {
				break
			}
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

const (
	streamChunk      = 256
	streamChunkBytes = 4 << 20
)

// streamItems is a chunk of a stream: items from start on, prepared, and
// Next's error after them (io.EOF at the end).
type streamItems struct {
	start int
	items []ledger.StreamItem
	preps []*prepared
	errs  []error
	end   error
}

// feedStream reads Next on its own goroutine and prepares each chunk on
// every core: two chunks wait for the writer while a third is read and
// prepared. stop ends it and waits, so Next is not called after
// PutStream returns.
func (l *Ledger) feedStream(next func() (ledger.StreamItem, error)) (<-chan streamItems, func()) {
	out := make(chan streamItems, 2)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		for start := 0; ; {
			c := streamItems{start: start}
			for size := 0; len(c.items) < streamChunk && size < streamChunkBytes; {
				it, err := next()
				if err != nil {
					c.end = err
					break
				}
				c.items = append(c.items, it)
				size += it.Size()
			}
			c.preps, c.errs = prepareItems(c.items, l.maxBody)
			select {
			case out <- c:
			case <-quit:
				return
			}
			if c.end != nil {
				return
			}
			start += len(c.items)
		}
	}()
	var once sync.Once
	return out, func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

func prepareItems(items []ledger.StreamItem, max int64) ([]*prepared, []error) {
	r := prepareChunk(0, len(items), func(i int) (*prepared, error) {
		v, err := items[i].View()
		if err != nil || v == nil {
			return nil, err
		}
		return prepare(v, max)
	})
	return r.preps, r.errs
}

// storeStream stores one chunk; end is set when the batch ends in it.
func (w *wtx) storeStream(s ledger.Stream, c streamItems, res *ledger.PutResult) (end bool, err error) {
	var ids []string
	for _, p := range c.preps {
		if p != nil {
			ids = append(ids, p.v.PropositionID)
		}
	}
	if err := w.load(ids); err != nil {
		return true, err
	}
	for i, it := range c.items {
		if end, err := w.putItem(s, c.start+i, it, c.preps[i], c.errs[i], res); end || err != nil {
			return true, err
		}
	}
	if err := w.flushFull(); err != nil {
		return true, err
	}
	if c.end != nil && !errors.Is(c.end, io.EOF) {
		return true, c.end
	}
	return c.end != nil, nil
}

// putItem stores one prepared item, or hands its refusal to s.Refused.
func (w *wtx) putItem(s ledger.Stream, i int, it ledger.StreamItem, p *prepared, refusal error, res *ledger.PutResult) (end bool, err error) {
	if refusal == nil && p != nil {
		out, err := w.store(p)
		var we *warrant.Error
		switch {
		case err == nil:
			out.Index = i
			if out.Stored {
				res.Stored++
			} else {
				res.Unchanged++
			}
			if s.Stored != nil {
				s.Stored(it, out)
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
	switch r := s.Refused(it, refusal); {
	case r == nil:
		return false, nil
	case errors.Is(r, io.EOF):
		return true, nil
	default:
		return true, r
	}
}
