// Package ledgertest is the conformance suite every ledger store runs: one
// suite, two stores. [Run] takes a function giving the location (--db
// value) of a fresh, empty ledger, opens it through store.Open, and checks
// the behaviours ingest and the MCP server rely on: the §9 history table,
// round trips of every reference-pack fixture, immutability refusals,
// record identity, all-or-nothing batches, appends (concurrent ones
// included), latest and history, search, the chain head and Verify.
// Tampering is store-specific (raw SQL) and stays in each store's tests.
package ledgertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/internal/sharedtest"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
)

// Fresh returns the --db value of a new, empty ledger for t.
type Fresh func(t *testing.T) string

// FixedNow makes created_at deterministic.
func FixedNow() time.Time { return time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC) }

// Open opens (creating when writable) the ledger at dsn for t.
func Open(t testing.TB, dsn string, readOnly bool) store.Ledger {
	t.Helper()
	l, err := store.Open(context.Background(), dsn, store.Options{ReadOnly: readOnly, Create: !readOnly, Now: FixedNow})
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// Run runs the suite.
func Run(t *testing.T, fresh Fresh) {
	tests := []struct {
		name string
		fn   func(t *testing.T, fresh Fresh)
	}{
		{"HistoryTable", testHistoryTable},
		{"PackRoundTrip", testPackRoundTrip},
		{"PutGetLatest", testPutGetLatest},
		{"BatchIsAllOrNothing", testBatchIsAllOrNothing},
		{"ReadOnlyRefusesWrites", testReadOnly},
		{"AppendEvidenceAndCheck", testAppendEvidenceAndCheck},
		{"AppendRespectsWholeHistory", testAppendRespectsWholeHistory},
		{"AppendRevisitingOlderSnapshot", testAppendRevisiting},
		{"ConcurrentAppendsAndReaders", testConcurrentAppends},
		{"History", testHistory},
		{"SnapshotsSince", testSnapshotsSince},
		{"List", testList},
		{"ListUnicode", testListUnicode},
		{"ListFollowsLatestText", testListFollowsLatestText},
		{"Primitives", testPrimitives},
		{"HeadAndVerify", testHeadAndVerify},
		{"PutEachLarge", testPutEachLarge},
		{"MaxViewBytes", testMaxViewBytes},
		{"VerifyHead", testVerifyHead},
		{"ConceptGraph", testConceptGraph},
		{"ListSkipsOversized", testListSkipsOversized},
		{"PutStream", testPutStream},
		{"HashedReads", testHashedReads},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, fresh) })
	}
}

func decode(t testing.TB, s string) *warrant.View {
	t.Helper()
	v, err := warrant.DecodeView([]byte(s))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return v
}

func put(t testing.TB, l store.Ledger, vs ...*warrant.View) ledger.PutResult {
	t.Helper()
	res, err := l.Put(context.Background(), vs)
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	return res
}

func wantCode(t testing.TB, err error, code string) *warrant.Error {
	t.Helper()
	var we *warrant.Error
	if !errors.As(err, &we) || we.Code != code {
		t.Fatalf("got %v, want %s", err, code)
	}
	return we
}

// ViewP is a small view used throughout.
const ViewP = `{"proposition_id": "P-db", "view_id": "v1", "subjects": ["db-1"],
 "assertions": [{"assertion_id": "a1", "text": "The production database runs PostgreSQL 13.", "asserted_by": "me",
   "assertion_confidence": 0.9, "asserted_at": "2026-09-01T00:00:00Z",
   "source": {"source_id": "s1", "lineage_id": "L1", "origin_type": "turn", "origin_locator": "chat",
   "snapshot_id": "s1", "content_hash": "h1", "observed_at": "2026-09-01T00:00:00Z"}}],
 "evidence": [{"evidence_id": "e1", "polarity": "supports", "content": "recalled", "observed_at": "2026-09-01T00:00:00Z",
   "source": {"source_id": "s1", "lineage_id": "L1", "origin_type": "turn", "origin_locator": "chat",
   "snapshot_id": "s1", "content_hash": "h1", "observed_at": "2026-09-01T00:00:00Z"}}]}`

type historyStore struct{ l store.Ledger }

func (s historyStore) Put(v *warrant.View) (bool, error) {
	res, err := s.l.Put(context.Background(), []*warrant.View{v})
	return res.Stored == 1, err
}

func testHistoryTable(t *testing.T, fresh Fresh) {
	snapshottest.Run(t, func(t *testing.T) snapshottest.Store { return historyStore{Open(t, fresh(t), false)} })
}

// testPackRoundTrip stores every fixture of the reference pack, each in a
// ledger of its own (fixtures reuse ids with other content), and reads it
// back byte for byte, with the same warrant at the fixture's time.
func testPackRoundTrip(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	pack := filepath.Join(sharedtest.Dir(t), "ewp-pack")
	for _, f := range sharedtest.PackFiles(t, pack, "fixtures") {
		doc, err := warrant.DecodeDocument(f.Data)
		if err != nil {
			t.Errorf("%s: the kernel refuses a fixture: %v", f.Name, err)
			continue
		}
		l := Open(t, fresh(t), false)
		if _, err := l.Put(ctx, []*warrant.View{doc.View}); err != nil {
			t.Errorf("%s: put: %v", f.Name, err)
			continue
		}
		back, err := l.Get(ctx, doc.View.PropositionID, doc.View.ViewID)
		if err != nil {
			t.Errorf("%s: get: %v", f.Name, err)
			continue
		}
		if !bytes.Equal(warrant.Encode(back), warrant.Encode(doc.View)) || !bytes.Equal(warrant.Canonical(back), warrant.Canonical(doc.View)) {
			t.Errorf("%s: read back differs from what was put", f.Name)
		}
		if doc.EvaluatedAt != "" {
			a, err1 := warrant.Evaluate(doc.View, doc.EvaluatedAt)
			b, err2 := warrant.Evaluate(back, doc.EvaluatedAt)
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if err1 != nil || err2 != nil || !bytes.Equal(ja, jb) {
				t.Errorf("%s: warrant changed by the round trip: %+v %v / %+v %v", f.Name, a, err1, b, err2)
			}
		}
		if _, err := l.Verify(ctx); err != nil {
			t.Errorf("%s: verify: %v", f.Name, err)
		}
	}
}

func testPutGetLatest(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	v := decode(t, ViewP)
	res := put(t, l, v)
	if res.Stored != 1 || res.Views[0].Seq != 1 {
		t.Fatalf("result %+v", res)
	}
	if again := put(t, l, decode(t, ViewP)); again.Stored != 0 || again.Unchanged != 1 || again.Views[0].Seq != 1 {
		t.Fatalf("identical re-put: %+v", again)
	}
	got, err := l.Latest(ctx, "P-db")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(warrant.Encode(got), warrant.Encode(v)) {
		t.Fatal("latest differs from what was put")
	}
	if id, _ := l.LatestViewID(ctx, "P-db"); id != "v1" {
		t.Fatalf("LatestViewID = %q", id)
	}
	s, err := l.LatestSnapshot(ctx, "P-db")
	if err != nil || s.Seq != 1 || s.ViewID != "v1" || !bytes.Equal(s.Body, warrant.Encode(v)) || s.CreatedAt != "2026-09-21T12:00:00Z" {
		t.Fatalf("LatestSnapshot %+v %v", s, err)
	}
	if s2, err := l.GetSnapshot(ctx, "P-db", "v1"); err != nil || !bytes.Equal(s2.Body, s.Body) {
		t.Fatalf("GetSnapshot %v", err)
	}
	changed := decode(t, ViewP)
	changed.Subjects = []string{"db-2"}
	_, err = l.Put(ctx, []*warrant.View{changed})
	wantCode(t, err, warrant.CodeImmutableRecord)
	_, err = l.Latest(ctx, "P-none")
	wantCode(t, err, warrant.CodeMissingView)
	_, err = l.Get(ctx, "P-db", "v-none")
	wantCode(t, err, warrant.CodeMissingView)
	_, err = l.LatestSnapshot(ctx, "P-none")
	wantCode(t, err, warrant.CodeMissingView)
	_, err = l.LatestViewID(ctx, "P-none")
	wantCode(t, err, warrant.CodeMissingView)
}

func testBatchIsAllOrNothing(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	good := decode(t, ViewP)
	bad := decode(t, ViewP)
	bad.ViewID = "v2"
	bad.Evidence[0].Content = "rewritten"
	other := decode(t, strings.ReplaceAll(ViewP, "P-db", "P-other"))
	_, err := l.Put(ctx, []*warrant.View{good, other, bad})
	var be *ledger.BatchError
	if !errors.As(err, &be) || be.Index != 2 {
		t.Fatalf("want BatchError at index 2, got %v", err)
	}
	we := wantCode(t, err, warrant.CodeImmutableRecord)
	if !strings.Contains(we.Error(), `"v1"`) {
		t.Fatalf("refusal does not name the view that stored e1 first: %v", we)
	}
	if _, err := l.Latest(ctx, "P-other"); err == nil {
		t.Fatal("a refused batch left a view behind")
	}
	if rep, err := l.Verify(ctx); err != nil || rep.Events != 0 {
		t.Fatalf("verify after refusal: %+v %v", rep, err)
	}
}

func testReadOnly(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	dsn := fresh(t)
	if _, err := store.Open(ctx, dsn, store.Options{ReadOnly: true}); err == nil {
		t.Fatal("a read-only open of a missing ledger succeeded")
	}
	put(t, Open(t, dsn, false), decode(t, ViewP))
	r := Open(t, dsn, true)
	if !r.ReadOnly() {
		t.Fatal("ReadOnly() is false")
	}
	if _, err := r.Latest(ctx, "P-db"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Put(ctx, []*warrant.View{decode(t, ViewP)}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("put on read-only ledger: %v", err)
	}
}

func evidence(id, hash string) warrant.Evidence {
	return warrant.Evidence{EvidenceID: id, Polarity: warrant.Opposes, Content: "psql says 16",
		ObservedAt: "2026-09-20T00:00:00Z", Source: warrant.SourceRef{ContentHash: hash, ObservedAt: "2026-09-20T00:00:00Z"}}
}

func testAppendEvidenceAndCheck(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	put(t, l, decode(t, ViewP))
	e := evidence("e2", "h2")
	res, err := l.AppendEvidence(ctx, "P-db", e)
	if err != nil || !res.Stored || res.Seq != 2 {
		t.Fatalf("append: %+v %v", res, err)
	}
	again, err := l.AppendEvidence(ctx, "P-db", e)
	if err != nil || again.Stored || again.View.ViewID != res.View.ViewID || again.Seq != 2 {
		t.Fatalf("retried append: %+v %v", again, err)
	}
	latest, _ := l.Latest(ctx, "P-db")
	if latest.ViewID != res.View.ViewID || len(latest.Evidence) != 2 {
		t.Fatalf("latest %s with %d evidence", latest.ViewID, len(latest.Evidence))
	}
	c := warrant.Check{CheckID: "k1", Method: "cmd", Scope: "db-1", Result: "supports", ObservedAt: "2026-09-20T00:00:00Z",
		Source: warrant.SourceRef{ContentHash: "h3", ObservedAt: "2026-09-20T00:00:00Z"}}
	if res, err := l.AppendCheck(ctx, "P-db", c); err != nil || !res.Stored {
		t.Fatalf("append check: %+v %v", res, err)
	}
	_, err = l.AppendCheck(ctx, "P-none", warrant.Check{CheckID: "k"})
	wantCode(t, err, warrant.CodeMissingView)
	e.Source.ContentHash, e.EvidenceID = "", "e3"
	_, err = l.AppendEvidence(ctx, "P-db", e)
	wantCode(t, err, warrant.CodeMissingContentHash)
	if _, err := l.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

func testAppendRespectsWholeHistory(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	v1, v2 := decode(t, ViewP), decode(t, ViewP)
	v2.ViewID, v2.Evidence = "v2", nil // e1 leaves the latest snapshot
	put(t, l, v1, v2)
	_, err := l.AppendEvidence(ctx, "P-db", evidence("e1", "h9"))
	we := wantCode(t, err, warrant.CodeImmutableRecord)
	if !strings.Contains(we.Rule, `"v1"`) {
		t.Fatalf("refusal does not name the earlier view: %v", we)
	}
}

func testAppendRevisiting(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	a := decode(t, strings.Replace(ViewP, `"view_id": "v1", `, "", 1)) // derived id, holds e1
	b := decode(t, ViewP)
	b.ViewID, b.Evidence = "v2", nil
	put(t, l, a, b)
	_, err := l.AppendEvidence(ctx, "P-db", a.Evidence[0])
	we := wantCode(t, err, warrant.CodeImmutableRecord)
	if !strings.Contains(we.Rule, a.ViewID) {
		t.Fatalf("refusal does not name the earlier snapshot %s: %v", a.ViewID, we)
	}
}

// testConcurrentAppends runs writers on separate handles (as separate
// processes would have) appending to one proposition, and readers polling
// it: every append lands, readers see only whole snapshots, and the chain
// verifies.
func testConcurrentAppends(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	dsn := fresh(t)
	base := Open(t, dsn, false)
	put(t, base, decode(t, ViewP))
	const writers, appends, readers = 3, 25, 2
	done := make(chan struct{})
	var wg, rg, reading sync.WaitGroup
	// The writers begin once every reader has read once, so that reads
	// and appends overlap however the goroutines are scheduled (on a busy
	// machine the writers could otherwise finish first).
	reading.Add(readers)
	for w := range writers {
		l := Open(t, dsn, false)
		wg.Go(func() {
			reading.Wait()
			for i := range appends {
				e := warrant.Evidence{EvidenceID: fmt.Sprintf("e-w%d-%d", w, i), Polarity: warrant.Supports,
					Content: "c", ObservedAt: "2026-09-20T00:00:00Z",
					Source: warrant.SourceRef{ContentHash: "h", ObservedAt: "2026-09-20T00:00:00Z"}}
				if _, err := l.AppendEvidence(ctx, "P-db", e); err != nil {
					t.Errorf("writer %d append %d: %v", w, i, err)
					return
				}
			}
		})
	}
	for range readers {
		l := Open(t, dsn, true)
		rg.Go(func() { readUntil(t, l, done, reading.Done) })
	}
	wg.Wait()
	close(done)
	rg.Wait()
	latest, err := base.Latest(ctx, "P-db")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(latest.Evidence), 1+writers*appends; got != want {
		t.Fatalf("latest holds %d evidence items, want %d: an append was lost", got, want)
	}
	if hist, _ := base.History(ctx, "P-db"); len(hist) != 1+writers*appends {
		t.Fatalf("%d snapshots, want %d", len(hist), 1+writers*appends)
	}
	rep, err := base.Verify(ctx)
	if err != nil || rep.Events != 1+writers*appends {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// readUntil reads P-db until done, calling first after its first read:
// every read must hold all the evidence an earlier one held.
func readUntil(t *testing.T, l store.Ledger, done <-chan struct{}, first func()) {
	prev := map[string]bool{}
	for reads := 0; ; reads++ {
		if reads > 0 {
			select {
			case <-done:
				return
			default:
			}
		}
		v, err := l.Latest(context.Background(), "P-db")
		if reads == 0 {
			first()
		}
		if err != nil {
			t.Errorf("read: %v", err)
			return
		}
		now := map[string]bool{}
		for _, e := range v.Evidence {
			now[e.EvidenceID] = true
		}
		for id := range prev {
			if !now[id] {
				t.Errorf("snapshot %s lacks %s, which an earlier read saw", v.ViewID, id)
				return
			}
		}
		prev = now
	}
}

func testHistory(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	v2 := decode(t, ViewP)
	v2.ViewID = "v0-second" // sorts before v1: history is by storage order
	put(t, l, decode(t, ViewP), decode(t, strings.ReplaceAll(ViewP, "P-db", "P-other")), v2)
	h, err := l.History(ctx, "P-db")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].ViewID != "v1" || h[1].ViewID != "v0-second" || h[0].Seq != 1 || h[1].Seq != 3 ||
		h[0].PropositionID != "P-db" || h[1].CreatedAt != "2026-09-21T12:00:00Z" || h[0].Body != nil {
		t.Fatalf("history %+v", h)
	}
	if id, _ := l.LatestViewID(ctx, "P-db"); id != "v0-second" {
		t.Fatalf("latest is %q, want the last stored", id)
	}
	if h, err := l.History(ctx, "P-none"); err != nil || len(h) != 0 {
		t.Fatalf("history of an unknown proposition: %+v %v", h, err)
	}
}

// sinceReader is the paged follow read both stores offer beside
// store.Ledger (the operator console follows the ledger with it).
type sinceReader interface {
	SnapshotsSince(ctx context.Context, afterSeq int64, limit int) ([]ledger.Snapshot, error)
}

// testSnapshotsSince: pages of the snapshots after a sequence number, in
// storage order, without bodies, agreeing with History; an empty page at
// the end; a page size of zero refused.
func testSnapshotsSince(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	sr, ok := l.(sinceReader)
	if !ok {
		t.Fatalf("%T has no SnapshotsSince", l)
	}
	v2 := decode(t, ViewP)
	v2.ViewID = "v0-second"
	put(t, l, decode(t, ViewP), decode(t, strings.ReplaceAll(ViewP, "P-db", "P-other")))
	put(t, l, v2)
	first, err := sr.SnapshotsSince(ctx, 0, 2)
	if err != nil || len(first) != 2 {
		t.Fatalf("SnapshotsSince(0, 2): %+v %v", first, err)
	}
	rest, err := sr.SnapshotsSince(ctx, first[1].Seq, 10)
	if err != nil || len(rest) != 1 {
		t.Fatalf("SnapshotsSince(%d, 10): %+v %v", first[1].Seq, rest, err)
	}
	all := append(first, rest...)
	want := [][2]string{{"P-db", "v1"}, {"P-other", "v1"}, {"P-db", "v0-second"}}
	for i, s := range all {
		if s.PropositionID != want[i][0] || s.ViewID != want[i][1] || s.Body != nil || s.CreatedAt != "2026-09-21T12:00:00Z" || (i > 0 && s.Seq <= all[i-1].Seq) {
			t.Fatalf("row %d: %+v, want %v in storage order without body", i, s, want[i])
		}
	}
	h, _ := l.History(ctx, "P-db")
	if len(h) != 2 || h[0].Seq != all[0].Seq || h[1].Seq != all[2].Seq {
		t.Fatalf("History %+v disagrees with SnapshotsSince %+v", h, all)
	}
	if end, err := sr.SnapshotsSince(ctx, all[2].Seq, 10); err != nil || len(end) != 0 {
		t.Fatalf("after the last: %+v %v", end, err)
	}
	if _, err := sr.SnapshotsSince(ctx, 0, 0); err == nil {
		t.Fatal("a page size of zero was accepted")
	}
}

func listIDs(t *testing.T, l store.Ledger, q string) []string {
	t.Helper()
	got, err := l.List(context.Background(), q, 10)
	if err != nil {
		t.Fatalf("List(%q): %v", q, err)
	}
	ids := []string{}
	for _, s := range got {
		ids = append(ids, s.PropositionID)
	}
	return ids
}

func testList(t *testing.T, fresh Fresh) {
	l := Open(t, fresh(t), false)
	put(t, l, decode(t, ViewP), decode(t, strings.NewReplacer("P-db", "P-cache", "PostgreSQL 13", "Redis 7").Replace(ViewP)))
	cases := map[string][]string{
		"":                 {"P-cache", "P-db"},
		"p-DB":             {"P-db"},
		"postgre":          {"P-db"},
		"GRESQL":           {"P-db"},
		"redis":            {"P-cache"},
		"-c":               {"P-cache"},
		`"quoted" AND (x*`: {},
		"production":       {"P-cache", "P-db"},
		"100%":             {},
		"_":                {},
		"%":                {},
	}
	for q, want := range cases {
		if got := listIDs(t, l, q); !slices.Equal(got, want) {
			t.Errorf("List(%q) = %v, want %v", q, got, want)
		}
	}
	all, err := l.List(context.Background(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.LatestViewID != "v1" || len(s.Texts) != 1 {
			t.Errorf("summary %+v, want latest v1 with its one text", s)
		}
	}
	got, err := l.List(context.Background(), "", 1)
	if err != nil || len(got) != 1 || got[0].PropositionID != "P-cache" || got[0].LatestViewID != "v1" || len(got[0].Texts) != 1 {
		t.Fatalf("List limit 1: %+v %v", got, err)
	}
}

// testListUnicode: case-insensitive means Unicode full case folding, in
// ids and texts alike.
func testListUnicode(t *testing.T, fresh Fresh) {
	l := Open(t, fresh(t), false)
	put(t, l, decode(t, strings.NewReplacer("P-db", "P-Ärger", "PostgreSQL 13", "ΩMEGA läuft auf der Straße").Replace(ViewP)))
	for _, q := range []string{"ärger", "ÄRGER", "ωmega", "LÄUFT", "STRASSE", "straße"} {
		if got := listIDs(t, l, q); !slices.Equal(got, []string{"P-Ärger"}) {
			t.Errorf("List(%q) = %v", q, got)
		}
	}
}

func testListFollowsLatestText(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	v2 := decode(t, strings.NewReplacer(`"v1"`, `"v2"`, `"a1"`, `"a2"`, "PostgreSQL 13", "PostgreSQL 16").Replace(ViewP))
	put(t, l, decode(t, ViewP), v2)
	if got, _ := l.List(ctx, "PostgreSQL 13", 10); len(got) != 0 {
		t.Fatalf("a text the latest snapshot dropped still finds the proposition: %+v", got)
	}
	if got, _ := l.List(ctx, "postgresql 16", 10); len(got) != 1 || got[0].LatestViewID != "v2" {
		t.Fatalf("latest text not found: %+v", got)
	}
}

func testPrimitives(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	if v, _ := l.GraphVersion(ctx); v != 0 {
		t.Fatalf("empty graph version %d", v)
	}
	add := func(rows ...ledger.PrimitiveRow) error {
		return l.AppendPrimitives(ctx, func(cur []ledger.PrimitiveRow) ([]ledger.PrimitiveRow, error) {
			for _, r := range rows {
				for _, c := range cur {
					if c.NameFold == r.NameFold && c.ID != r.ID {
						return nil, errors.New("name taken")
					}
				}
			}
			return rows, nil
		})
	}
	if err := add(ledger.PrimitiveRow{ID: "p1", NameFold: "file", Body: []byte(`{"v":1}`)},
		ledger.PrimitiveRow{ID: "p2", NameFold: "dir", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	put(t, l, decode(t, ViewP)) // snapshots and revisions share one chain
	if err := add(ledger.PrimitiveRow{ID: "p3", NameFold: "file", Body: []byte(`{}`)}); err == nil {
		t.Fatal("validate's refusal was ignored")
	}
	if err := add(ledger.PrimitiveRow{ID: "p1", NameFold: "file", Body: []byte(`{"v":2}`)},
		ledger.PrimitiveRow{ID: "p2", NameFold: "dir", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := add(ledger.PrimitiveRow{ID: "p9", NameFold: "x", Body: []byte(`{`)}); err == nil {
		t.Fatal("invalid JSON body accepted")
	}
	cur, _ := l.CurrentPrimitives(ctx)
	if len(cur) != 2 || cur[0].ID != "p1" || string(cur[0].Body) != `{"v":2}` || cur[0].Seq != 3 {
		t.Fatalf("current %+v", cur)
	}
	if v, _ := l.GraphVersion(ctx); v != 3 {
		t.Fatalf("graph version %d, want 3 (identical p2 row skipped)", v)
	}
	since, _ := l.PrimitivesSince(ctx, 1)
	if len(since) != 2 || since[0].ID != "p2" || since[1].Seq != 3 {
		t.Fatalf("since 1: %+v", since)
	}
	if rep, err := l.Verify(ctx); err != nil || rep.Primitives != 3 || rep.Snapshots != 1 || rep.Events != 4 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// testHeadAndVerify: the head names the last event and Verify walks it.
// That two stores reach the same head is the copy tests' to show.
func testHeadAndVerify(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	if h, err := l.Head(ctx); err != nil || h != (ledger.Head{}) {
		t.Fatalf("empty head %+v %v", h, err)
	}
	var vs []*warrant.View
	for i := range 6 {
		vs = append(vs, decode(t, string(snapshottest.SyntheticView(i/3, i%3))))
	}
	put(t, l, vs...)
	h, err := l.Head(ctx)
	if err != nil || h.Seq != 6 || len(h.Hash) != 64 {
		t.Fatalf("head %+v %v", h, err)
	}
	rep, err := l.Verify(ctx)
	if err != nil || !rep.OK() || rep.Events != 6 || rep.Snapshots != 6 {
		t.Fatalf("verify %+v %v", rep, err)
	}
}

// testPutEachLarge stores more views than one preparation chunk, with a
// skipped index, in one batch.
func testPutEachLarge(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	const n = 700
	res, err := l.PutEach(ctx, n, func(i int) (*warrant.View, error) {
		if i == 5 {
			return nil, nil
		}
		return warrant.DecodeView(snapshottest.SyntheticView(i/4, i%4))
	})
	if err != nil || res.Stored != n-1 || len(res.Views) != n-1 {
		t.Fatalf("PutEach: stored %d, %d outcomes, %v", res.Stored, len(res.Views), err)
	}
	if res.Views[5].Index != 6 {
		t.Fatalf("outcome 5 has index %d, want 6 (index 5 skipped)", res.Views[5].Index)
	}
	_, err = l.PutEach(ctx, n, func(i int) (*warrant.View, error) {
		if i == 600 {
			return nil, errors.New("bad input")
		}
		return warrant.DecodeView(snapshottest.SyntheticView(1000+i, 0))
	})
	var be *ledger.BatchError
	if !errors.As(err, &be) || be.Index != 600 {
		t.Fatalf("want BatchError at 600, got %v", err)
	}
	if rep, err := l.Verify(ctx); err != nil || rep.Snapshots != n-1 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// Open with a limit on stored forms.
func openLimited(t testing.TB, dsn string, max int) store.Ledger {
	t.Helper()
	l, err := store.Open(context.Background(), dsn, store.Options{Create: true, Now: FixedNow, MaxViewBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// testMaxViewBytes: a stored form over the ledger's limit is refused on
// put, and a reader with a lower limit than the writer's refuses to read
// it, both with CodeLimitExceeded.
func testMaxViewBytes(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	dsn := fresh(t)
	big := openLimited(t, dsn, -1)
	small := openLimited(t, dsn, 300)
	_, err := small.Put(ctx, []*warrant.View{decode(t, ViewP)})
	wantCode(t, err, warrant.CodeLimitExceeded)
	put(t, big, decode(t, ViewP))
	_, err = small.Latest(ctx, "P-db")
	wantCode(t, err, warrant.CodeLimitExceeded)
	_, err = small.Get(ctx, "P-db", "v1")
	wantCode(t, err, warrant.CodeLimitExceeded)
	_, err = small.LatestSnapshot(ctx, "P-db")
	wantCode(t, err, warrant.CodeLimitExceeded)
	_, _, err = small.LatestHashed(ctx, "P-db")
	wantCode(t, err, warrant.CodeLimitExceeded)
	_, err = small.AppendEvidence(ctx, "P-db", evidence("e2", "h2"))
	wantCode(t, err, warrant.CodeLimitExceeded)
	if _, err := small.Verify(ctx); err != nil {
		t.Fatalf("verify reads every body whatever the limit: %v", err)
	}
}

func testVerifyHead(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	put(t, l, decode(t, ViewP))
	kept, err := l.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.Verify(ctx)
	if err != nil || rep.Head != kept {
		t.Fatalf("verify reports head %v, want %v (%v)", rep.Head, kept, err)
	}
	put(t, l, decode(t, strings.ReplaceAll(ViewP, "P-db", "P-more")))
	if err := l.VerifyHead(ctx, kept); err != nil {
		t.Fatalf("a grown ledger fails its kept head: %v", err)
	}
	var brk *ledger.Break
	if err := l.VerifyHead(ctx, ledger.Head{Seq: 9, Hash: kept.Hash}); !errors.As(err, &brk) || !strings.Contains(brk.What, "cut off") {
		t.Fatalf("a head beyond the end: %v", err)
	}
	other := ledger.Head{Seq: 1, Hash: strings.Repeat("0", 64)}
	if err := l.VerifyHead(ctx, other); !errors.As(err, &brk) || !strings.Contains(brk.What, "rewritten") {
		t.Fatalf("another hash: %v", err)
	}
}

const twoConcepts = `{"graph": "g", "primitives": [
 {"name": "File", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "a file"}}]},
 {"name": "delete", "depths": [{"level": 0}, {"level": 1, "properties": {"d": "remove"}},
   {"level": 2, "properties": {"d": "x"}, "relata": [{"type": "APPLIES_TO", "target": "file", "target_depth": 1}]}]}]}`

// testConceptGraph: the concept graph (package graphstore) over the store:
// what one handle writes another reads, at the ledger's graph version,
// and the revisions are on the chain.
func testConceptGraph(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	dsn := fresh(t)
	w := graphstore.New(Open(t, dsn, false), FixedNow)
	doc, err := grounding.DecodeDocument([]byte(twoConcepts))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Ingest(ctx, doc); err != nil {
		t.Fatal(err)
	}
	l := Open(t, dsn, true)
	g, version, err := graphstore.New(l, FixedNow).Graph(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if gv, _ := l.GraphVersion(ctx); g.Len() != 2 || version != gv || version == 0 {
		t.Fatalf("read back %d primitives at version %d (ledger at %d)", g.Len(), version, gv)
	}
	if rep, err := l.Verify(ctx); err != nil || rep.Primitives != version {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// testListSkipsOversized: a search does not fail on a proposition whose
// latest snapshot is over the reader's limit; it leaves it out.
func testListSkipsOversized(t *testing.T, fresh Fresh) {
	dsn := fresh(t)
	put(t, openLimited(t, dsn, -1), decode(t, ViewP), decode(t, strings.NewReplacer("P-db", "P-big", "runs PostgreSQL 13", "runs PostgreSQL 13"+strings.Repeat(" and more", 100)).Replace(ViewP)))
	small := openLimited(t, dsn, 1200)
	got, err := small.List(context.Background(), "postgresql", 10)
	if err != nil || len(got) != 1 || got[0].PropositionID != "P-db" {
		t.Fatalf("List over an oversized snapshot: %+v %v", got, err)
	}
}
