package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"database/sql"
	"errors"
	"strings"

	"github.com/ewp-go/ewp/snapshot"
)

// propState is what a write transaction knows about one proposition.
type propState struct {
	before bool                 // it had snapshots before this transaction
	added  snapshot.Map         // records indexed by this transaction
	views  map[string]storedRef // snapshots stored by this transaction
}

type storedRef struct {
	sum [32]byte
	seq int64
}

// prop returns the transaction's state of a proposition, asking the
// database once per transaction whether it existed before.
func (w *wtx) prop(id string) (*propState, error) {
	if st, ok := w.props[id]; ok {
		return st, nil
	}
	st := &propState{added: snapshot.Map{}, views: map[string]storedRef{}}
	if err := w.st.known.QueryRowContext(w.ctx, id).Scan(&st.before); err != nil {
		return nil, ledgerErr("probe proposition", err)
	}
	w.props[strings.Clone(id)] = st // a key must not pin the view's whole decoded text
	return st, nil
}

// store writes one prepared view, or finds it already stored. Only a
// proposition that existed before the transaction costs queries; what the
// transaction itself stored is answered from memory.
func (w *wtx) store(p *prepared) (ledger.Outcome, error) {
	v := p.v
	out := ledger.Outcome{PropositionID: v.PropositionID, ViewID: v.ViewID}
	st, err := w.prop(v.PropositionID)
	if err != nil {
		return out, err
	}
	prev, found, err := w.existing(st, v.PropositionID, v.ViewID)
	if err != nil {
		return out, err
	}
	if found {
		if prev.sum != p.bodySum {
			return out, snapshot.ImmutableSnapshot(v.PropositionID, v.ViewID)
		}
		out.Seq = prev.seq
		return out, nil
	}
	idx := &dbIndex{w: w, prop: v.PropositionID, state: st}
	if err := snapshot.CheckFingerprints(idx, p.fps); err != nil {
		return out, err
	}
	if idx.err != nil {
		return out, idx.err
	}
	out.Seq, out.Stored = w.insertSnapshot(p), true
	st.views[strings.Clone(v.ViewID)] = storedRef{p.bodySum, out.Seq}
	return out, w.index(p, st, idx.missing)
}

// existing finds a snapshot already stored under (prop, view).
func (w *wtx) existing(st *propState, prop, view string) (storedRef, bool, error) {
	if r, ok := st.views[view]; ok {
		return r, true, nil
	}
	if !st.before {
		return storedRef{}, false, nil
	}
	var r storedRef
	var sum []byte
	err := w.st.probe.QueryRowContext(w.ctx, prop, view).Scan(&sum, &r.seq)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, ledgerErr("probe snapshot", err)
	}
	copy(r.sum[:], sum)
	return r, true, nil
}

// dbIndex is the snapshot.Lookup of one proposition inside a write
// transaction: first the records this transaction has already indexed
// (kept in memory, so later views of the same proposition in a batch need
// no query), then, only for a proposition that had snapshots before the
// transaction, a point query on the records table.
type dbIndex struct {
	w       *wtx
	prop    string
	state   *propState
	missing []snapshot.Key
	err     error
}

func (d *dbIndex) Lookup(k snapshot.Key) (snapshot.Stored, bool) {
	if s, ok := d.state.added[k]; ok {
		return s, true
	}
	var s snapshot.Stored
	if !d.state.before || d.err != nil {
		d.missing = append(d.missing, k)
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
func (w *wtx) index(p *prepared, st *propState, missing []snapshot.Key) error {
	if len(missing) == 0 {
		return nil
	}
	isNew := make(map[snapshot.Key]bool, len(missing))
	for _, k := range missing {
		isNew[k] = true
	}
	// What the transaction remembers is copied out of the view: its strings
	// point into the view's decoded text, which would otherwise stay live
	// until forget, however large the views.
	viewID := strings.Clone(p.v.ViewID)
	for _, f := range p.fps {
		if isNew[f.Key] {
			w.pend.records = append(w.pend.records, recordRow{p.v.PropositionID, string(f.Kind), f.ID, p.v.ViewID, f.Sum})
			k := f.Key
			k.ID = strings.Clone(k.ID)
			st.added[k] = snapshot.Stored{Sum: f.Sum, ViewID: viewID}
		}
	}
	for _, a := range p.v.Assertions {
		if isNew[snapshot.Key{Kind: snapshot.KindAssertion, ID: a.AssertionID}] {
			w.pend.fts = append(w.pend.fts, [3]string{searchText(a.Text, w.foldedText), p.v.PropositionID, a.AssertionID})
		}
	}
	w.remembered += len(missing)
	if w.remembered >= maxRemembered {
		return w.forget()
	}
	return w.flushFull()
}

// maxRemembered bounds the records a transaction keeps in memory.
// 50,000 records (about 10,000 fixture-shaped views) hold some 40 MB of
// Go heap; forgetting more often costs nothing measurable, since a
// forgotten proposition is found by an indexed point query.
var maxRemembered = 50_000 // a variable so tests can force forgetting

// forget writes everything pending and drops the in-memory state of the
// transaction's propositions, so a huge batch runs in bounded memory: the
// next view of a forgotten proposition finds it "known" in the database
// and its records by point query, which now see the flushed rows.
func (w *wtx) forget() error {
	if err := w.flush(true); err != nil {
		return err
	}
	// A new map, not clear: a cleared map keeps the buckets it grew to.
	w.props = map[string]*propState{}
	w.remembered = 0
	return nil
}

// insertSnapshot queues the snapshot row and its event.
func (w *wtx) insertSnapshot(p *prepared) int64 {
	w.snapSeq++
	seq, v := w.snapSeq, p.v
	w.pend.snaps = append(w.pend.snaps, snapRow{seq, v.PropositionID, v.ViewID, p.body, p.bodySum, p.canon})
	w.event(tableSnapshots, seq, snapshotEvent(seq, v.PropositionID, v.ViewID, p.bodySum[:], p.canon[:], w.now))
	return seq
}
