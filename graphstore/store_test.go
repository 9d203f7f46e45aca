package graphstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/sqlite"
)

var t0 = time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return t0 }

func newLedger(t testing.TB) *sqlite.Ledger {
	t.Helper()
	l, err := sqlite.Create(filepath.Join(t.TempDir(), "ewp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// countingLedger counts full graph reads and catch-ups, to show the cache
// works.
type countingLedger struct {
	*sqlite.Ledger
	loads, catchUps atomic.Int32
}

func (c *countingLedger) CurrentPrimitives(ctx context.Context) ([]ledger.PrimitiveRow, error) {
	c.loads.Add(1)
	return c.Ledger.CurrentPrimitives(ctx)
}

func (c *countingLedger) PrimitivesSince(ctx context.Context, seq int64) ([]ledger.PrimitiveRow, error) {
	c.catchUps.Add(1)
	return c.Ledger.PrimitivesSince(ctx, seq)
}

func doc(t testing.TB, src string) *grounding.Document {
	t.Helper()
	d, err := grounding.DecodeDocument([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

const twoConcepts = `{"graph": "g", "primitives": [
 {"name": "file", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "a file"}}]},
 {"name": "delete", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "remove"}},
   {"level": 2, "properties": {"d": "x"}, "relata": [{"type": "APPLIES_TO", "target": "file", "target_depth": 1}]}]}]}`

func ingest(t testing.TB, s *graphstore.Store, src string) graphstore.IngestSummary {
	t.Helper()
	sum, err := s.Ingest(context.Background(), doc(t, src))
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// snapshot is a graph and the version it was read at.
type snapshot struct {
	Graph   *grounding.Graph
	Version int64
}

func current(t testing.TB, s *graphstore.Store) snapshot {
	t.Helper()
	g, v, err := s.Graph(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snapshot{g, v}
}

func TestCurrentReloadsOnlyWhenTheVersionMoves(t *testing.T) {
	cl := &countingLedger{Ledger: newLedger(t)}
	s := graphstore.New(cl, clock)
	if snap := current(t, s); snap.Graph.Len() != 0 || snap.Version != 0 {
		t.Fatalf("empty ledger: %d primitives, version %d", snap.Graph.Len(), snap.Version)
	}
	ingest(t, s, twoConcepts)
	first := current(t, s)
	for range 5 {
		if again := current(t, s); again.Graph != first.Graph {
			t.Fatal("an unchanged graph was rebuilt")
		}
	}
	if l, c := cl.loads.Load(), cl.catchUps.Load(); l != 1 || c != 1 {
		t.Fatalf("%d full reads and %d catch-ups, want 1 (the empty graph) and 1 (after the ingest)", l, c)
	}
	// Another writer (here a second store on the same ledger) moves the
	// version; the first store notices on its next read.
	other := graphstore.New(cl.Ledger, clock)
	if _, err := other.Learn(context.Background(), existenceGap("symlink"), existenceFill("symlink")); err != nil {
		t.Fatal(err)
	}
	if snap := current(t, s); snap.Graph.Len() != 3 || snap.Version <= first.Version {
		t.Fatalf("write by another store not seen: %d primitives, version %d", snap.Graph.Len(), snap.Version)
	}
}

func TestIngestSummaryAndOrder(t *testing.T) {
	s := graphstore.New(newLedger(t), clock)
	if sum := ingest(t, s, twoConcepts); sum.Added != 2 || sum.Revised != 0 || sum.Unchanged != 0 {
		t.Fatalf("first ingest: %+v", sum)
	}
	if sum := ingest(t, s, twoConcepts); sum.Added != 0 || sum.Unchanged != 2 {
		t.Fatalf("re-ingest: %+v", sum)
	}
	revised := `{"graph": "g2", "primitives": [{"name": "File", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "changed"}}]},
	  {"name": "dir", "depths": [{"level": 0}]}]}`
	if sum := ingest(t, s, revised); sum.Added != 1 || sum.Revised != 1 {
		t.Fatalf("revision: %+v", sum)
	}
	var names []string
	for _, p := range current(t, s).Graph.Primitives() {
		names = append(names, p.Name)
	}
	// The revised primitive keeps its place and takes the new spelling.
	if want := []string{"File", "delete", "dir"}; !slices.Equal(names, want) {
		t.Fatalf("order %v, want %v", names, want)
	}
}

// A document that clashes with the stored graph writes nothing.
func TestIngestIsWholeOrNothing(t *testing.T) {
	l := newLedger(t)
	s := graphstore.New(l, clock)
	ingest(t, s, `{"graph": "a", "primitives": [
	  {"name": "a", "depths": [{"level": 0}]},
	  {"name": "b", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "x"}, "relata": [{"type": "REQUIRES", "target": "a", "target_depth": 0}]}]}]}`)
	before, _ := l.GraphVersion(context.Background())
	_, err := s.Ingest(context.Background(), doc(t, `{"graph": "c", "primitives": [
	  {"name": "new", "depths": [{"level": 0}]},
	  {"name": "A", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "x"}, "relata": [{"type": "DEPENDS_ON", "target": "b", "target_depth": 0}]}]}]}`))
	var ge *grounding.GraphError
	if !errors.As(err, &ge) || ge.Rule != grounding.RuleCycle || ge.Primitive != "A" || ge.Depth != 1 {
		t.Fatalf("want a cycle naming A at D1, got %v", err)
	}
	after, _ := l.GraphVersion(context.Background())
	if after != before || current(t, s).Graph.HasPrimitive("new") {
		t.Fatal("part of a refused document was written")
	}
}

// Two writers racing to fill the same gap: validation runs inside the
// write transaction, so exactly one wins and the other is told the gap is
// already resolved.
func TestConcurrentLearnFillsOnce(t *testing.T) {
	l := newLedger(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = graphstore.New(l, clock).Learn(context.Background(), existenceGap("widget"), existenceFill("widget"))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		var re *grounding.GapResolvedError
		switch {
		case err == nil:
			won++
		case !errors.As(err, &re):
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if v, _ := l.GraphVersion(context.Background()); won != 1 || v != 1 {
		t.Fatalf("%d writers won, graph version %d; want 1 and 1", won, v)
	}
}

func TestLearnStampsLearnedProvenance(t *testing.T) {
	s := graphstore.New(newLedger(t), clock)
	revs, err := s.Learn(context.Background(), existenceGap("network"), existenceFill("network"))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := current(t, s).Graph.ByName("NETWORK")
	if !ok || len(revs) != 1 || p.Provenance.Source != grounding.Learned || !p.Provenance.CreatedAt.Equal(t0) {
		t.Fatalf("learned primitive %+v", p)
	}
	for _, d := range p.Depths {
		if d.Provenance.Source != grounding.Learned {
			t.Fatalf("depth %d provenance %s", d.Level, d.Provenance.Source)
		}
	}
}

func TestDecodeRefusesMiskeyedRows(t *testing.T) {
	s := graphstore.New(newLedger(t), clock)
	ingest(t, s, twoConcepts)
	rows, err := graphstore.Encode(current(t, s).Graph.Primitives())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := graphstore.Decode(rows); err != nil {
		t.Fatalf("round trip: %v", err)
	}
	rows[0].NameFold = "something else"
	if _, err := graphstore.Decode(rows); err == nil {
		t.Fatal("a row keyed under another name was accepted")
	}
	rows[0].Body = []byte(`{"id": 1}`)
	if _, err := graphstore.Decode(rows); err == nil {
		t.Fatal("an undecodable body was accepted")
	}
}

func existenceGap(name string) grounding.Gap {
	return grounding.Gap{Kind: grounding.ExistenceGap, Primitive: name}
}

func existenceFill(name string) grounding.Candidate {
	return grounding.Candidate{Kind: grounding.ExistenceGap, Name: name,
		D1: &grounding.ProposedDepth{Level: grounding.Identity, Properties: grounding.JSONObject{"description": "learned"}}}
}

// Catching up on new revisions gives exactly the graph a full read gives:
// same primitives, same order (revised ones keep their place), same bodies.
func TestCatchUpEqualsFullRead(t *testing.T) {
	l := newLedger(t)
	s := graphstore.New(l, clock)
	current(t, s) // cache the empty graph
	ingest(t, s, twoConcepts)
	current(t, s)
	ingest(t, s, `{"graph": "g2", "primitives": [{"name": "File", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "v2"}}]},
	  {"name": "dir", "depths": [{"level": 0}]}]}`)
	ingest(t, s, `{"graph": "g3", "primitives": [{"name": "file", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "v3"}}]}]}`)
	if _, err := s.Learn(context.Background(), existenceGap("link"), existenceFill("link")); err != nil {
		t.Fatal(err)
	}
	incremental := current(t, s)
	fresh := current(t, graphstore.New(l, clock))
	a, _ := graphstore.Encode(incremental.Graph.Primitives())
	b, _ := graphstore.Encode(fresh.Graph.Primitives())
	if incremental.Version != fresh.Version || len(a) != len(b) {
		t.Fatalf("versions %d/%d, %d/%d primitives", incremental.Version, fresh.Version, len(a), len(b))
	}
	for i := range a {
		if a[i].ID != b[i].ID || string(a[i].Body) != string(b[i].Body) {
			t.Fatalf("primitive %d differs:\n%s\n%s", i, a[i].Body, b[i].Body)
		}
	}
}
