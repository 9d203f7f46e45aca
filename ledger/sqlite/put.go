package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"context"
	"crypto/sha256"
	"errors"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// Put stores views as one all-or-nothing batch. Each view is checked
// against the §9 rules as of the views before it (earlier views of the
// same batch included): an identical re-put is a no-op, a different
// snapshot under an existing (proposition_id, view_id) or a record id
// reused with other content is refused with CodeImmutableRecord, and then
// nothing of the batch is written.
//
// Put stores what it is given: attesting trusted origins
// (snapshot.RequireAttestation) is the caller's duty, because only the
// caller knows who is writing.
func (l *Ledger) Put(ctx context.Context, views []*warrant.View) (ledger.PutResult, error) {
	for i, v := range views {
		if v == nil {
			return ledger.PutResult{}, &ledger.BatchError{Index: i, Err: errors.New("nil view")}
		}
	}
	return l.PutEach(ctx, len(views), func(i int) (*warrant.View, error) { return views[i], nil })
}

// PutEach is Put for a batch of n views produced by view while the write
// transaction runs: view is called once per index, from several goroutines,
// ahead of the writer, so a loader can decode on every core while SQLite
// writes. view returning (nil, nil) skips the index; an error aborts the
// batch (nothing written) with a *ledger.BatchError naming the index.
func (l *Ledger) PutEach(ctx context.Context, n int, view func(i int) (*warrant.View, error)) (ledger.PutResult, error) {
	res := ledger.PutResult{Views: make([]ledger.Outcome, 0, n)}
	preps := prepareAll(n, l.maxBody, view)
	defer preps.stop()
	progress := progressOf(ctx)
	err := l.write(ctx, func(w *wtx) error {
		for i := range n {
			p, err := preps.get(i)
			if err != nil {
				return &ledger.BatchError{Index: i, Err: err}
			}
			preps.release(i) // stored views are garbage for the collector, not live heap
			if p != nil {
				out, err := w.store(p)
				if err != nil {
					return &ledger.BatchError{Index: i, Err: err}
				}
				out.Index = i
				res.Add(out)
			}
			if (i+1)%progressEvery == 0 {
				progress(i+1, n)
			}
		}
		progress(n, n)
		return nil
	})
	if err != nil {
		return ledger.PutResult{}, err
	}
	return res, nil
}

// prepared is everything about a view that needs no database: computed
// ahead of (and in parallel with) the write transaction.
type prepared struct {
	v       *warrant.View
	body    []byte
	bodySum [32]byte
	canon   [32]byte
	fps     []snapshot.Fingerprint
}

// prepare refuses what no store may hold (snapshot.CheckSurrogates) and
// what this ledger may not (a stored form over max bytes), and computes
// the rest.
func prepare(v *warrant.View, max int64) (*prepared, error) {
	if err := snapshot.CheckSurrogates(v); err != nil {
		return nil, err
	}
	body := warrant.Encode(v)
	if int64(len(body)) > max {
		return nil, bodyLimit(v.PropositionID, v.ViewID, int64(len(body)), max)
	}
	return &prepared{
		v: v, body: body, bodySum: sha256.Sum256(body),
		canon: snapshot.CanonicalSum(body, v), fps: snapshot.Fingerprints(v),
	}, nil
}
