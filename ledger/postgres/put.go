package postgres

import (
	"context"
	"crypto/sha256"
	"errors"
	"runtime"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/chain"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// Put stores views as one all-or-nothing batch, with the SQLite ledger's
// rules (see ledger/sqlite's Ledger.Put): an identical re-put is a no-op, a
// different snapshot under an existing (proposition_id, view_id) or a
// record id reused with other content is refused with
// CodeImmutableRecord, and then nothing of the batch is written.
func (l *Ledger) Put(ctx context.Context, views []*warrant.View) (ledger.PutResult, error) {
	for i, v := range views {
		if v == nil {
			return ledger.PutResult{}, &ledger.BatchError{Index: i, Err: errors.New("nil view")}
		}
	}
	return l.PutEach(ctx, len(views), func(i int) (*warrant.View, error) { return views[i], nil })
}

// PutEach is Put for n views produced by view, which is called once per
// index from several goroutines while the transaction runs (the next
// chunk is prepared while the current one is written). (nil, nil) skips
// the index; an error aborts the batch with a *BatchError naming it.
func (l *Ledger) PutEach(ctx context.Context, n int, view func(i int) (*warrant.View, error)) (ledger.PutResult, error) {
	res := ledger.PutResult{Views: make([]ledger.Outcome, 0, n)}
	chunks, stop := prepareChunks(n, func(i int) (*prepared, error) {
		v, err := view(i)
		if err != nil || v == nil {
			return nil, err
		}
		return prepare(v, l.maxBody)
	})
	defer stop()
	err := l.write(ctx, func(w *wtx) error {
		for c := range chunks {
			if err := w.storeChunk(c, &res); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return ledger.PutResult{}, err
	}
	return res, nil
}

func (w *wtx) storeChunk(c chunk, res *ledger.PutResult) error {
	var ids []string
	for i, p := range c.preps {
		if c.errs[i] != nil {
			return &ledger.BatchError{Index: c.start + i, Err: c.errs[i]}
		}
		if p != nil {
			ids = append(ids, p.v.PropositionID)
		}
	}
	if err := w.load(ids); err != nil {
		return err
	}
	for i, p := range c.preps {
		if p == nil {
			continue
		}
		out, err := w.store(p)
		if err != nil {
			return &ledger.BatchError{Index: c.start + i, Err: err}
		}
		out.Index = c.start + i
		res.Add(out)
	}
	return w.flushFull()
}

// prepared is everything about a view that needs no database.
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
	return &prepared{v: v, body: body, bodySum: sha256.Sum256(body),
		canon: snapshot.CanonicalSum(body, v), fps: snapshot.Fingerprints(v)}, nil
}

// chunk is a run of consecutive views prepared together.
type chunk struct {
	start int
	preps []*prepared
	errs  []error
}

const chunkSize = 256

// prepareChunks decodes, encodes and hashes views on every core, a chunk
// at a time and at most two chunks ahead of the writer. stop ends it
// early (after a refusal) and waits, so no goroutine outlives the call.
func prepareChunks(n int, prep func(i int) (*prepared, error)) (<-chan chunk, func()) {
	out := make(chan chunk, 2)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		for start := 0; start < n; start += chunkSize {
			c := prepareChunk(start, min(n, start+chunkSize), prep)
			select {
			case out <- c:
			case <-quit:
				return
			}
			if hasErr(c.errs) {
				return
			}
		}
	}()
	var once sync.Once
	return out, func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

func prepareChunk(start, end int, prep func(i int) (*prepared, error)) chunk {
	c := chunk{start: start, preps: make([]*prepared, end-start), errs: make([]error, end-start)}
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), end-start)
	for k := range workers {
		wg.Go(func() {
			for i := k; i < end-start; i += workers {
				c.preps[i], c.errs[i] = prep(start + i)
			}
		})
	}
	wg.Wait()
	return c
}

func hasErr(errs []error) bool {
	for _, e := range errs {
		if e != nil {
			return true
		}
	}
	return false
}

// load reads, in one round trip, the snapshots and records of the given
// propositions that the transaction does not know yet.
func (w *wtx) load(ids []string) error {
	b := &pgx.Batch{}
	read := w.queueLoad(b, ids)
	br := w.tx.SendBatch(w.ctx, b)
	defer br.Close()
	return read(br)
}

// queueLoad queues the queries of load on b and returns what reads their
// results, so a caller can send other queries in the same round trip.
func (w *wtx) queueLoad(b *pgx.Batch, ids []string) func(pgx.BatchResults) error {
	var need [][]byte
	seen := map[string]bool{}
	for _, id := range ids {
		if _, ok := w.props[id]; !ok && !seen[id] {
			seen[id] = true
			need = append(need, []byte(id))
			// A clone: the id may share memory with the whole decoded view,
			// which the key would keep alive for the transaction.
			w.props[strings.Clone(id)] = &propState{views: map[string]storedRef{}, idx: snapshot.Map{}}
		}
	}
	if len(need) == 0 {
		return func(pgx.BatchResults) error { return nil }
	}
	b.Queue(`SELECT proposition_id, view_id, body_sha256, seq FROM snapshots WHERE proposition_id = ANY($1)`, need)
	b.Queue(`SELECT proposition_id, kind, record_id, sum, view_id FROM records WHERE proposition_id = ANY($1)`, need)
	return func(br pgx.BatchResults) error {
		if err := w.readViews(br); err != nil {
			return ledgerErr("probe propositions", err)
		}
		return ledgerErrOrNil("look up records", w.readRecords(br))
	}
}

func (w *wtx) readViews(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var prop, view, sum []byte
		var seq int64
		if err := rows.Scan(&prop, &view, &sum, &seq); err != nil {
			return err
		}
		st := w.props[string(prop)]
		st.existed = true
		r := storedRef{seq: seq}
		copy(r.sum[:], sum)
		st.views[string(view)] = r
	}
	return rows.Err()
}

func (w *wtx) readRecords(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var prop, id, sum, view []byte
		var kind string
		if err := rows.Scan(&prop, &kind, &id, &sum, &view); err != nil {
			return err
		}
		s := snapshot.Stored{ViewID: string(view)}
		copy(s.Sum[:], sum)
		w.props[string(prop)].idx[snapshot.Key{Kind: snapshot.Kind(kind), ID: string(id)}] = s
	}
	return rows.Err()
}

// store writes one prepared view, or finds it already stored; the
// proposition must have been loaded.
func (w *wtx) store(p *prepared) (ledger.Outcome, error) {
	v := p.v
	out := ledger.Outcome{PropositionID: v.PropositionID, ViewID: v.ViewID}
	st := w.props[v.PropositionID]
	if prev, ok := st.views[v.ViewID]; ok {
		if prev.sum != p.bodySum {
			return out, snapshot.ImmutableSnapshot(v.PropositionID, v.ViewID)
		}
		out.Seq = prev.seq
		return out, nil
	}
	if err := snapshot.CheckFingerprints(st.idx, p.fps); err != nil {
		return out, err
	}
	w.snapSeq++
	out.Seq, out.Stored = w.snapSeq, true
	w.pend.snaps = append(w.pend.snaps, []any{w.snapSeq, []byte(v.PropositionID), []byte(v.ViewID), p.body, p.bodySum[:], p.canon[:], w.now})
	w.pend.bytes += len(p.body)
	w.event(chain.TableSnapshots, w.snapSeq, chain.SnapshotPayload(w.snapSeq, v.PropositionID, v.ViewID, p.bodySum[:], p.canon[:], w.now))
	if !st.existed && len(st.views) == 0 {
		w.pend.props = append(w.pend.props, []any{[]byte(v.PropositionID), searchable(v.PropositionID)})
	}
	st.views[strings.Clone(v.ViewID)] = storedRef{p.bodySum, w.snapSeq}
	w.index(p, st)
	return out, nil
}

// index adds the view's first-seen records to the identity index and its
// first-seen assertions to the search index.
func (w *wtx) index(p *prepared, st *propState) {
	prop := []byte(p.v.PropositionID)
	viewID := strings.Clone(p.v.ViewID)
	for _, f := range p.fps {
		if _, ok := st.idx[f.Key]; ok {
			continue
		}
		k := f.Key
		k.ID = strings.Clone(k.ID)
		st.idx[k] = snapshot.Stored{Sum: f.Sum, ViewID: viewID}
		w.pend.records = append(w.pend.records, []any{prop, string(f.Kind), []byte(f.ID), f.Sum[:], []byte(viewID)})
		if f.Kind == snapshot.KindAssertion {
			text := searchable(assertionText(p.v, f.ID))
			w.pend.texts = append(w.pend.texts, []any{prop, []byte(f.ID), text})
			w.pend.bytes += len(text)
		}
	}
}

func assertionText(v *warrant.View, id string) string {
	for _, a := range v.Assertions {
		if a.AssertionID == id {
			return a.Text
		}
	}
	return ""
}

// searchable is what the search columns hold: the folded text with NULs
// and bytes that are not UTF-8 dropped, which PostgreSQL's text cannot
// hold. Dropping characters on both sides keeps every true match a match;
// List then checks each candidate against the stored text itself.
func searchable(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(snapshot.Fold(s), "\x00", ""), "")
}
