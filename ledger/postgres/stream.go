package postgres

import (
	"cmp"
	"context"
	"errors"
	"io"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/warrant"
)

// PutStream is the SQLite ledger's PutStream (see ledger.Stream) on
// PostgreSQL: a source of unknown length, one transaction, all or
// nothing, with the same callbacks in the same order. Items are read a
// chunk at a time and prepared on every core (prepareChunk), then stored
// in input order; memory stays bounded by the chunk, as the outcomes go
// to Stream.Stored instead of being collected (PutResult.Views stays nil).
func (l *Ledger) PutStream(ctx context.Context, s ledger.Stream) (ledger.PutResult, error) {
	var res ledger.PutResult
	err := l.write(ctx, func(w *wtx) error {
		for i := 0; ; {
			items, end := nextChunk(s.Next)
			stop, err := l.storeStreamChunk(w, s, i, items, &res)
			if err != nil {
				return err
			}
			i += len(items)
			if stop {
				break
			}
			if end != nil {
				if !errors.Is(end, io.EOF) {
					return end
				}
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

// nextChunk reads up to chunkSize items; end is Next's error (io.EOF at
// the end of the source), after which Next is not called again.
func nextChunk(next func() (ledger.StreamItem, error)) ([]ledger.StreamItem, error) {
	var items []ledger.StreamItem
	for len(items) < chunkSize {
		it, err := next()
		if err != nil {
			return items, err
		}
		items = append(items, it)
	}
	return items, nil
}

// storeStreamChunk prepares items (numbered from start) and stores them in
// order; stop is set when Refused ended the batch with io.EOF.
func (l *Ledger) storeStreamChunk(w *wtx, s ledger.Stream, start int, items []ledger.StreamItem, res *ledger.PutResult) (stop bool, err error) {
	if len(items) == 0 {
		return false, nil
	}
	c := prepareChunk(0, len(items), func(i int) (*prepared, error) {
		v, err := items[i].View()
		if err != nil || v == nil {
			return nil, err
		}
		return prepare(v, l.maxBody)
	})
	var ids []string
	for _, p := range c.preps {
		if p != nil {
			ids = append(ids, p.v.PropositionID)
		}
	}
	if err := w.load(ids); err != nil {
		return true, err
	}
	for k, it := range items {
		refusal := c.errs[k]
		if p := c.preps[k]; refusal == nil && p != nil {
			out, err := w.store(p)
			var we *warrant.Error
			switch {
			case err == nil:
				out.Index = start + k
				res.Stored, res.Unchanged = res.Stored+b2i(out.Stored), res.Unchanged+b2i(!out.Stored)
				if s.Stored != nil {
					s.Stored(it, out)
				}
				continue
			case errors.As(err, &we):
				refusal = err
			default:
				return true, &ledger.BatchError{Index: start + k, Err: err}
			}
		}
		if refusal == nil {
			continue // skipped by its producer
		}
		if s.Refused == nil {
			return true, &ledger.BatchError{Index: start + k, Err: refusal}
		}
		switch r := s.Refused(it, refusal); {
		case r == nil:
		case errors.Is(r, io.EOF):
			return true, w.flushFull()
		default:
			return true, cmp.Or(r, refusal)
		}
	}
	return false, w.flushFull()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
