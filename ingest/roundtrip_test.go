package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/ewp-go/ewp/internal/sharedtest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
)

// kernelVerdict is the oracle: what warrant_now says about a document.
// A document without evaluated_at is a plain view, which ingest stores
// (its T is the reader's business), so only a present T is checked.
func kernelVerdict(raw []byte) (*warrant.Document, error) {
	doc, err := warrant.DecodeDocument(raw)
	if err != nil {
		return nil, err
	}
	if hasEvaluatedAt(raw) {
		if _, err := warrant.Evaluate(doc.View, doc.EvaluatedAt); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

type roundTripper struct {
	t       *testing.T
	fac     *ledgerFactory
	refused store.Ledger // every refused document goes here; it must stay empty
	stored  int
	refuses int
}

func newRoundTripper(t *testing.T, k storeKind) *roundTripper {
	fac := newFactory(t, k)
	refl, done := fac.fresh(t)
	t.Cleanup(done)
	return &roundTripper{t: t, fac: fac, refused: refl}
}

// check loads one document through ingest and compares with the oracle.
// It returns the stored view's warrant at the document's T (nil if none).
func (rt *roundTripper) check(name string, raw []byte) *warrant.WarrantView {
	t := rt.t
	ctx := context.Background()
	doc, verdict := kernelVerdict(raw)
	if verdict != nil {
		rt.refuses++
		rep, err := (&Loader{L: rt.refused, Opt: Options{AttestTrustedOrigins: true}}).LoadFile(ctx, name, raw)
		if err != nil || rep.Written || len(rep.Refused) != 1 || rep.Refused[0].Code != codeOf(verdict) {
			t.Errorf("%s: kernel refuses (%v) but ingest reported %+v, %v", name, verdict, rep, err)
		}
		return nil
	}
	rt.stored++
	l, done := rt.fac.fresh(t)
	defer done()
	rep, err := (&Loader{L: l, Opt: Options{AttestTrustedOrigins: true}}).LoadFile(ctx, name, raw)
	if err != nil || rep.Stored != 1 || len(rep.Refused) != 0 {
		t.Errorf("%s: kernel accepts but ingest reported %+v, %v", name, rep, err)
		return nil
	}
	back, err := l.Get(ctx, doc.View.PropositionID, doc.View.ViewID)
	if err != nil {
		t.Errorf("%s: read back: %v", name, err)
		return nil
	}
	if !bytes.Equal(warrant.Canonical(back), warrant.Canonical(doc.View)) || !bytes.Equal(warrant.Encode(back), warrant.Encode(doc.View)) {
		t.Errorf("%s: read back differs from what was loaded\n got %s\nwant %s", name, warrant.Encode(back), warrant.Encode(doc.View))
		return nil
	}
	return rt.sameWarrant(name, doc, back)
}

// sameWarrant compares the whole WarrantView (axes and diagnostics) of the
// stored view with that of the document as loaded. Diagnostic id lists are
// compared as sets: the stored form is canonical (records sorted by id),
// and lists such as "checks" follow record order.
func (rt *roundTripper) sameWarrant(name string, doc *warrant.Document, back *warrant.View) *warrant.WarrantView {
	if doc.EvaluatedAt == "" {
		return nil
	}
	want, err1 := warrant.Evaluate(doc.View, doc.EvaluatedAt)
	got, err2 := warrant.Evaluate(back, doc.EvaluatedAt)
	if err1 != nil || err2 != nil {
		rt.t.Errorf("%s: evaluate: %v / %v", name, err1, err2)
		return nil
	}
	a, b := normalized(want), normalized(got)
	if !bytes.Equal(a, b) {
		rt.t.Errorf("%s: warrant changed by the round trip\n got %s\nwant %s", name, b, a)
	}
	return got
}

// normalized is the WarrantView's JSON with every list of strings sorted.
func normalized(wv *warrant.WarrantView) []byte {
	raw, _ := json.Marshal(wv)
	var m any
	_ = json.Unmarshal(raw, &m)
	out, _ := json.Marshal(sortLists(m))
	return out
}

func sortLists(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = sortLists(e)
		}
	case []any:
		strs := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				strs = append(strs, s)
			}
		}
		if len(strs) == len(x) {
			slices.Sort(strs)
			for i, s := range strs {
				x[i] = s
			}
		}
	}
	return v
}

func (rt *roundTripper) finish() {
	rep, err := rt.refused.Verify(context.Background())
	if err != nil || rep.Events != 0 {
		rt.t.Errorf("refused documents wrote something: %+v %v", rep, err)
	}
	rt.t.Logf("%d documents stored and read back, %d refused with nothing written", rt.stored, rt.refuses)
}

func TestRoundTripPackFixtures(t *testing.T) { eachStore(t, testRoundTripPackFixtures) }

func testRoundTripPackFixtures(t *testing.T, k storeKind) {
	pack := filepath.Join(sharedtest.Dir(t), "ewp-pack")
	rt := newRoundTripper(t, k)
	for _, f := range sharedtest.PackFiles(t, pack, "fixtures") {
		wv := rt.check(f.Name, f.Data)
		if wv == nil {
			t.Errorf("%s: fixture not stored", f.Name)
			continue
		}
		compareExpected(t, filepath.Join(pack, "expected", f.Name), wv)
	}
	for _, f := range sharedtest.PackFiles(t, pack, "invalid") {
		if rt.check("invalid/"+f.Name, f.Data) != nil || rt.refuses == 0 {
			t.Errorf("invalid/%s: an invalid view was stored", f.Name)
		}
	}
	rt.finish()
}

func compareExpected(t *testing.T, path string, wv *warrant.WarrantView) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("expected axes: %v", err)
		return
	}
	var want map[string]string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	w := wv.Warrant
	got := map[string]string{"acceptance": w.Acceptance, "conflict": w.Conflict, "verification": w.Verification, "currency": w.Currency, "sufficiency": w.Sufficiency}
	for k, v := range got {
		if want[k] != v {
			t.Errorf("%s: %s = %s after the round trip, the reference says %s", filepath.Base(path), k, v, want[k])
		}
	}
}

// On PostgreSQL a fresh ledger per document is a schema and its Init, so
// that subtest takes every pgEvery-th case (every tenth of those under
// -short): the store's part (write, read back) is the same for every
// document, and the SQLite subtest covers the whole corpus.
func TestRoundTripDifferentialCorpus(t *testing.T) {
	eachStore(t, testRoundTripDifferentialCorpus)
}

const pgEvery = 200

func testRoundTripDifferentialCorpus(t *testing.T, k storeKind) {
	every := 1
	if k == postgresStore {
		every = pgEvery
	}
	if testing.Short() {
		every *= 10
	}
	rt := newRoundTripper(t, k)
	sharedtest.EachCorpusCase(t, func(n int, c sharedtest.CorpusCase) {
		if (n-1)%every != 0 {
			return
		}
		rt.check(c.ID, c.Doc)
		if t.Failed() {
			t.Fatalf("stopping at corpus case %s", c.ID)
		}
	})
	rt.finish()
}
