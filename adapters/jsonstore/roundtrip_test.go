package jsonstore

import (
	"bytes"
	"context"
	"errors"
	"github.com/ewp-go/ewp/internal/sharedtest"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ewp-go/ewp/ingest"
	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// roundTrip stores what ewp-ingest would store from one document in a
// fresh store, reads it back every way the store offers and compares.
// Documents of one proposition reuse record ids with other content, which
// one store would rightly refuse, hence a store per document.
type roundTrip struct {
	t       *testing.T
	root    string
	n       int
	stored  int
	refused int
}

func (rt *roundTrip) check(name string, raw []byte) {
	t := rt.t
	// The ingest path: the kernel's decoder, a parseable evaluated_at when
	// one is given, attestation (granted, as --attest-trusted-origins).
	v, err := ingest.DecodeItem(raw, true)
	if err != nil {
		rt.refused++
		return // a refused document has no *warrant.View to store
	}
	rt.stored++
	rt.n++
	dir := filepath.Join(rt.root, "s"+itoa(rt.n))
	s, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	if res, err := s.Put(ctx, []*warrant.View{v}); err != nil || res.Stored != 1 {
		t.Fatalf("%s: the kernel accepts it, the store says %+v, %v", name, res, err)
	}
	again, err := s.Put(ctx, []*warrant.View{v})
	if err != nil || again.Unchanged != 1 {
		t.Fatalf("%s: identical re-put: %+v, %v", name, again, err)
	}
	got, err := s.Get(ctx, v.PropositionID, v.ViewID)
	if err != nil {
		t.Fatalf("%s: get: %v", name, err)
	}
	latest, err := s.Latest(ctx, v.PropositionID)
	if err != nil {
		t.Fatalf("%s: latest: %v", name, err)
	}
	rt.same(name, v, got)
	rt.same(name, v, latest)
	if rt.n%50 == 0 { // Verify re-reads everything; a sample is enough
		mustVerify(t, s)
	}
}

// same holds the read-back view to the one put: equal canonical form and
// stored form, the same record identities, and the same axes at a fixed T.
func (rt *roundTrip) same(name string, want, got *warrant.View) {
	t := rt.t
	if !bytes.Equal(warrant.Canonical(got), warrant.Canonical(want)) || !bytes.Equal(warrant.Encode(got), warrant.Encode(want)) {
		t.Fatalf("%s: read back differs\n got %s\nwant %s", name, warrant.Encode(got), warrant.Encode(want))
	}
	if snapshot.StoredSum(got) != snapshot.StoredSum(want) || !reflect.DeepEqual(identities(got), identities(want)) {
		t.Fatalf("%s: read back has other identities", name)
	}
	const at = "2027-01-01T00:00:00Z"
	w1, err1 := warrant.Evaluate(want, at)
	w2, err2 := warrant.Evaluate(got, at)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(w1.Warrant, w2.Warrant) {
		t.Fatalf("%s: axes changed by the round trip: %+v / %+v (%v %v)", name, w1, w2, err1, err2)
	}
}

// identities are a view's record fingerprints without their field paths,
// which follow record order (the stored form sorts records by id).
func identities(v *warrant.View) map[snapshot.Key]snapshot.Sum {
	out := map[snapshot.Key]snapshot.Sum{}
	for _, f := range snapshot.Fingerprints(v) {
		out[f.Key] = f.Sum
	}
	return out
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

func TestRoundTripPack(t *testing.T) {
	pack := filepath.Join(sharedtest.Dir(t), "ewp-pack")
	rt := &roundTrip{t: t, root: tempDir(t)}
	for _, sub := range []string{"fixtures", "invalid"} {
		files := sharedtest.PackFiles(t, pack, sub)
		before := rt.stored
		for _, f := range files {
			rt.check(sub+"/"+f.Name, f.Data)
		}
		if sub == "fixtures" && rt.stored-before != len(files) {
			t.Errorf("stored %d of %d fixtures", rt.stored-before, len(files))
		}
		if sub == "invalid" && rt.stored != before {
			t.Errorf("stored %d invalid views", rt.stored-before)
		}
	}
	t.Logf("%d stored and read back unchanged, %d refused by the kernel", rt.stored, rt.refused)
}

func TestRoundTripCorpus(t *testing.T) {
	rt := &roundTrip{t: t, root: tempDir(t)}
	sharedtest.EachCorpusCase(t, func(_ int, c sharedtest.CorpusCase) {
		if testing.Short() && rt.stored+rt.refused >= 600 {
			return
		}
		rt.check(c.ID, c.Doc)
	})
	t.Logf("%d stored and read back unchanged, %d refused by the kernel", rt.stored, rt.refused)
}

// A caller can hand Put a warrant.View it built itself. The store must not
// keep one the kernel would refuse: whatever is stored must read back.
func TestPutRefusesViewsTheKernelRefuses(t *testing.T) {
	s := testStore(t)
	good := mustView(t, `{"proposition_id": "P", "view_id": "v1", "evidence": [{"evidence_id": "e1", "polarity": "supports", "content": "c", "observed_at": "2026-09-01T00:00:00Z",
		"source": {"source_id": "s1", "lineage_id": "L1", "origin_type": "extract", "origin_locator": "l", "snapshot_id": "n", "content_hash": "h", "observed_at": "2026-09-01T00:00:00Z"}}]}`)
	badPolarity := *good
	badPolarity.Evidence = []warrant.Evidence{good.Evidence[0]}
	badPolarity.Evidence[0].Polarity = "maybe"
	dup := *good
	dup.ViewID = "v2"
	dup.Evidence = []warrant.Evidence{good.Evidence[0], good.Evidence[0]}
	noID := *good
	noID.ViewID = ""
	empty := warrant.View{}
	for name, v := range map[string]*warrant.View{"unknown polarity": &badPolarity, "duplicate ids": &dup, "no view id": &noID, "zero view": &empty} {
		_, err := s.Put(context.Background(), []*warrant.View{good, v})
		var be *BatchError
		var we *warrant.Error
		if !errors.As(err, &be) || be.Index != 1 || !errors.As(err, &we) || we.Code != warrant.CodeInvalidView {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if rep := mustVerify(t, s); rep.Snapshots != 0 {
		t.Errorf("a refused batch wrote %d snapshots", rep.Snapshots)
	}
}
