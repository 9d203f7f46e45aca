package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// PutResult says what a Put did.
type PutResult struct {
	Stored    int
	Unchanged int
	// Views has one outcome per input view, in input order.
	Views []Outcome
}

// Outcome is what happened to one view of a write.
type Outcome struct {
	PropositionID string
	ViewID        string
	// Stored is false for an identical re-put (a no-op).
	Stored bool
	// Seq is the snapshot's sequence number (of the earlier identical
	// snapshot when Stored is false).
	Seq int64
}

// BatchError names the view of a batch that was refused. Err is a
// *warrant.Error for a refusal of the input or an *Error for a storage
// failure; errors.As reaches either.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("view %d: %v", e.Index, e.Err) }
func (e *BatchError) Unwrap() error { return e.Err }

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
func (l *Ledger) Put(ctx context.Context, views []*warrant.View) (PutResult, error) {
	res := PutResult{Views: make([]Outcome, 0, len(views))}
	for i, v := range views {
		if v == nil {
			return PutResult{}, &BatchError{i, errors.New("nil view")}
		}
	}
	preps := prepareAll(views)
	defer preps.stop()
	err := l.write(ctx, func(w *wtx) error {
		for i := range views {
			out, err := w.store(preps.get(i))
			if err != nil {
				return &BatchError{i, err}
			}
			res.add(out)
		}
		return nil
	})
	if err != nil {
		return PutResult{}, err
	}
	return res, nil
}

func (r *PutResult) add(o Outcome) {
	r.Views = append(r.Views, o)
	if o.Stored {
		r.Stored++
	} else {
		r.Unchanged++
	}
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

func prepare(v *warrant.View) *prepared {
	body := warrant.Encode(v)
	return &prepared{
		v: v, body: body, bodySum: sha256.Sum256(body),
		canon: sha256.Sum256(warrant.Canonical(v)), fps: snapshot.Fingerprints(v),
	}
}

// store writes one prepared view, or finds it already stored.
func (w *wtx) store(p *prepared) (Outcome, error) {
	v := p.v
	out := Outcome{PropositionID: v.PropositionID, ViewID: v.ViewID}
	var existing []byte
	var known bool
	if err := w.st.probe.QueryRowContext(w.ctx, v.PropositionID, v.ViewID).Scan(&existing, &known); err != nil {
		return out, ledgerErr("probe snapshot", err)
	}
	if existing != nil {
		if !bytes.Equal(existing, p.bodySum[:]) {
			return out, snapshot.ImmutableSnapshot(v.PropositionID, v.ViewID)
		}
		return out, w.tx.QueryRowContext(w.ctx, `SELECT seq FROM snapshots WHERE proposition_id = ? AND view_id = ?`,
			v.PropositionID, v.ViewID).Scan(&out.Seq)
	}
	idx := &dbIndex{w: w, prop: v.PropositionID, known: known}
	if err := snapshot.CheckFingerprints(idx, p.fps); err != nil {
		return out, err
	}
	if idx.err != nil {
		return out, idx.err
	}
	seq, err := w.insertSnapshot(p)
	if err != nil {
		return out, err
	}
	out.Seq, out.Stored = seq, true
	return out, w.index(p, idx.missing)
}

func (w *wtx) insertSnapshot(p *prepared) (int64, error) {
	w.snapSeq++
	seq, v := w.snapSeq, p.v
	if _, err := w.st.insSnap.ExecContext(w.ctx, seq, v.PropositionID, v.ViewID, p.body, p.bodySum[:], p.canon[:], w.now); err != nil {
		return 0, ledgerErr("insert snapshot", err)
	}
	payload := snapshotEvent(seq, v.PropositionID, v.ViewID, p.body, p.canon[:], w.now)
	return seq, w.event(tableSnapshots, seq, payload)
}

// dbIndex is the snapshot.Lookup over the records table. A proposition
// with no snapshot yet needs no query at all, which keeps a bulk load of
// new propositions cheap.
type dbIndex struct {
	w       *wtx
	prop    string
	known   bool
	missing []snapshot.Key
	err     error
}

func (d *dbIndex) Lookup(k snapshot.Key) (snapshot.Stored, bool) {
	var s snapshot.Stored
	if !d.known || d.err != nil {
		d.missing = append(d.missing, k)
		return s, false
	}
	if err := d.w.flush(); err != nil {
		d.err = err
		return s, false
	}
	var sum []byte
	err := d.w.st.lookup.QueryRowContext(d.w.ctx, d.prop, string(k.Kind), k.ID).Scan(&sum, &s.ViewID)
	if errors.Is(err, sql.ErrNoRows) {
		d.missing = append(d.missing, k)
		return s, false
	}
	if err != nil {
		d.err = ledgerErr("look up record", err)
		return s, false
	}
	copy(s.Sum[:], sum)
	return s, true
}

// index adds the view's first-seen records to the identity index and its
// first-seen assertions to the text search.
func (w *wtx) index(p *prepared, missing []snapshot.Key) error {
	if len(missing) == 0 {
		return nil
	}
	isNew := make(map[snapshot.Key]bool, len(missing))
	for _, k := range missing {
		isNew[k] = true
	}
	var rows []any
	for _, f := range p.fps {
		if isNew[f.Key] {
			rows = append(rows, p.v.PropositionID, string(f.Kind), f.ID, f.Sum[:], p.v.ViewID)
		}
	}
	if err := w.insertRecords(rows); err != nil {
		return err
	}
	for _, a := range p.v.Assertions {
		if isNew[snapshot.Key{Kind: snapshot.KindAssertion, ID: a.AssertionID}] {
			if _, err := w.st.insFTS.ExecContext(w.ctx, a.Text, p.v.PropositionID, a.AssertionID); err != nil {
				return ledgerErr("index assertion text", err)
			}
		}
	}
	return nil
}

// insertRecords buffers index rows so that most go to the database in
// multi-row INSERTs; flush writes the rest.
func (w *wtx) insertRecords(rows []any) error {
	w.pending = append(w.pending, rows...)
	if len(w.pending) < recBatch*recCols {
		return nil
	}
	return w.flush()
}

const recCols = 5

// flush must run before the records table is read and before commit.
func (w *wtx) flush() error {
	rows := w.pending
	w.pending = w.pending[:0]
	for len(rows) >= recBatch*recCols {
		if _, err := w.st.insRecN.ExecContext(w.ctx, rows[:recBatch*recCols]...); err != nil {
			return ledgerErr("index records", err)
		}
		rows = rows[recBatch*recCols:]
	}
	for ; len(rows) > 0; rows = rows[recCols:] {
		if _, err := w.st.insRec.ExecContext(w.ctx, rows[:recCols]...); err != nil {
			return ledgerErr("index records", err)
		}
	}
	return nil
}
