package jsonstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

func TestOpenNeverCreates(t *testing.T) {
	dir := filepath.Join(tempDir(t), "missing")
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open of a missing store: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("Open created the directory")
	}
	notEmpty := tempDir(t)
	os.WriteFile(filepath.Join(notEmpty, "x"), nil, 0o644)
	if _, err := Create(notEmpty, Options{}); err == nil {
		t.Fatal("Create took a non-empty directory")
	}
	s := testStore(t)
	os.WriteFile(filepath.Join(s.Dir(), markerName), []byte(`{"format": "ewp-jsonstore", "version": 99}`), 0o644)
	if _, err := Open(s.Dir(), Options{}); !errors.Is(err, ErrFormat) {
		t.Fatalf("open of another version: %v", err)
	}
}

func TestOpenOrCreateTwice(t *testing.T) {
	dir := filepath.Join(tempDir(t), "s")
	a, err := OpenOrCreate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, a, mustView(t, `{"proposition_id": "P"}`))
	b, err := OpenOrCreate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Latest(context.Background(), "P"); err != nil {
		t.Fatal(err)
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	s := testStore(t)
	mustPut(t, s, mustView(t, `{"proposition_id": "P", "view_id": "v1"}`))
	ro, err := Open(s.Dir(), Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.Put(context.Background(), []*warrant.View{mustView(t, `{"proposition_id": "P", "view_id": "v2"}`)}); err == nil {
		t.Fatal("a read-only store wrote")
	}
	if v, err := ro.Latest(context.Background(), "P"); err != nil || v.ViewID != "v1" {
		t.Fatalf("read-only read: %v %v", v, err)
	}
}

func TestMissingIsCodeMissingView(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	mustPut(t, s, mustView(t, `{"proposition_id": "P", "view_id": "v1"}`))
	_, err1 := s.Latest(ctx, "nope")
	_, err2 := s.Get(ctx, "P", "v9")
	_, err3 := s.AppendEvidence(ctx, "nope", evidence("e1"))
	for i, err := range []error{err1, err2, err3} {
		var we *warrant.Error
		if !errors.As(err, &we) || we.Code != warrant.CodeMissingView {
			t.Errorf("case %d: %v", i, err)
		}
	}
}

func TestAppendRules(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	mustPut(t, s, mustView(t, `{"proposition_id": "P", "view_id": "v1"}`))
	first, err := s.AppendEvidence(ctx, "P", evidence("e1"))
	if err != nil || !first.Stored || first.Seq != 2 || first.View.ViewID == "v1" {
		t.Fatalf("append: %+v %v", first, err)
	}
	retry, err := s.AppendEvidence(ctx, "P", evidence("e1"))
	if err != nil || retry.Stored || retry.View.ViewID != first.View.ViewID {
		t.Fatalf("a retried append is not a no-op: %+v %v", retry, err)
	}
	changed := evidence("e1")
	changed.Content = "other"
	var we *warrant.Error
	if _, err := s.AppendEvidence(ctx, "P", changed); !errors.As(err, &we) || we.Code != warrant.CodeImmutableRecord {
		t.Fatalf("changed record: %v", err)
	}
	noHash := evidence("e2")
	noHash.Source.ContentHash = ""
	if _, err := s.AppendEvidence(ctx, "P", noHash); !errors.As(err, &we) || we.Code != warrant.CodeMissingContentHash {
		t.Fatalf("missing content hash: %v", err)
	}
	check := warrant.Check{CheckID: "k1", Method: "tool_observation", Scope: "s", Result: warrant.Supports, ObservedAt: "2026-09-02T00:00:00Z",
		Source: warrant.SourceRef{ContentHash: "h", ObservedAt: "2026-09-02T00:00:00Z"}}
	if res, err := s.AppendCheck(ctx, "P", check); err != nil || len(res.View.Checks) != 1 || len(res.View.Evidence) != 1 {
		t.Fatalf("append check: %+v %v", res, err)
	}
	mustVerify(t, s)
}

// An edited snapshot file is a storage error, never a changed answer.
func TestTamperedFileIsDetected(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	mustPut(t, s, mustView(t, `{"proposition_id": "P", "view_id": "v1", "degraded": false}`))
	hist, _ := s.History(ctx, "P")
	path := filepath.Join(s.Dir(), hist[0].File)
	raw, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(raw, []byte(`"degraded": false`), []byte(`"degraded": true`), 1), 0o644)
	var se *Error
	if _, err := s.Latest(ctx, "P"); !errors.As(err, &se) {
		t.Fatalf("latest over an edited file: %v", err)
	}
	if _, err := s.Verify(ctx); !errors.As(err, &se) {
		t.Fatalf("verify over an edited file: %v", err)
	}
	os.WriteFile(path, raw, 0o644)
	os.WriteFile(filepath.Join(s.Dir(), escape("P"), "00000009-x.json"), raw, 0o644)
	if _, err := s.Verify(ctx); err == nil || !strings.Contains(err.Error(), "not named by the index") {
		t.Fatalf("verify over a stray file: %v", err)
	}
}

// TestSameAnswersAsLedger drives the SQLite ledger and the JSON store with
// the same writes, from the same synthetic history, and compares every
// answer: outcomes, refusals, appended view ids, stored bytes and List.
func TestSameAnswersAsLedger(t *testing.T) {
	ctx := context.Background()
	l, err := sqlite.Create(filepath.Join(tempDir(t), "l.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s := testStore(t)
	views := syntheticViews(t, 120, 4)
	for start := 0; start < len(views); start += 40 {
		batch := views[start : start+40]
		lr, lerr := l.Put(ctx, batch)
		sr, serr := s.Put(ctx, batch)
		if (lerr == nil) != (serr == nil) || lr.Stored != sr.Stored || lr.Unchanged != sr.Unchanged {
			t.Fatalf("batch at %d: ledger %+v %v, store %+v %v", start, lr, lerr, sr, serr)
		}
	}
	// A batch the rules refuse: the ledger and the store refuse the same view.
	bad := *views[5]
	bad.Degraded = !bad.Degraded
	_, lerr := l.Put(ctx, []*warrant.View{views[0], &bad})
	_, serr := s.Put(ctx, []*warrant.View{views[0], &bad})
	if lerr == nil || serr == nil || lerr.Error() != serr.Error() {
		t.Fatalf("refusals differ:\nledger %v\nstore  %v", lerr, serr)
	}
	for i := range 10 {
		prop := views[i*4].PropositionID
		la, lerr := l.AppendEvidence(ctx, prop, evidence("x"))
		sa, serr := s.AppendEvidence(ctx, prop, evidence("x"))
		if lerr != nil || serr != nil || la.View.ViewID != sa.View.ViewID || la.Stored != sa.Stored {
			t.Fatalf("append to %s: ledger %v %v, store %v %v", prop, la.View.ViewID, lerr, sa.View.ViewID, serr)
		}
	}
	for i := 0; i < len(views); i += 7 {
		prop := views[i].PropositionID
		lv, lerr := l.Latest(ctx, prop)
		sv, serr := s.Latest(ctx, prop)
		if lerr != nil || serr != nil {
			t.Fatalf("%s: latest: ledger %v, store %v", prop, lerr, serr)
		}
		if !bytes.Equal(warrant.Encode(lv), warrant.Encode(sv)) {
			t.Fatalf("%s: latest differs", prop)
		}
	}
	for _, q := range []string{"", "P-00000", "HOST 1", "build 7", "none such"} {
		ll, lerr := l.List(ctx, q, 20)
		sl, serr := s.List(ctx, q, 20)
		if lerr != nil || serr != nil {
			t.Fatalf("List(%q): ledger %v, store %v", q, lerr, serr)
		}
		if len(ll) != len(sl) {
			t.Fatalf("List(%q): ledger %d hits, store %d", q, len(ll), len(sl))
		}
		for i := range ll {
			if ll[i].PropositionID != sl[i].PropositionID || ll[i].LatestViewID != sl[i].LatestViewID || strings.Join(ll[i].Texts, "|") != strings.Join(sl[i].Texts, "|") {
				t.Fatalf("List(%q)[%d]: ledger %+v, store %+v", q, i, ll[i], sl[i])
			}
		}
	}
	mustVerify(t, s)
}

func syntheticViews(t *testing.T, n, perProp int) []*warrant.View {
	t.Helper()
	out := make([]*warrant.View, n)
	for i := range out {
		out[i] = mustView(t, string(snapshottest.SyntheticView(i/perProp, i%perProp)))
	}
	return out
}

// An append carrying a lone surrogate is refused like a put (the shared
// table covers puts), and nothing is stored.
func TestAppendRefusesLoneSurrogate(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	mustPut(t, s, mustView(t, `{"proposition_id": "P", "view_id": "v1"}`))
	e := evidence("e1")
	e.Content = "half a pair \xed\xa0\x80"
	var we *warrant.Error
	if _, err := s.AppendEvidence(ctx, "P", e); !errors.As(err, &we) || we.Code != warrant.CodeLoneSurrogate || we.Field != "evidence[0].content" {
		t.Fatalf("lone surrogate appended: %v", err)
	}
	if h, _ := s.History(ctx, "P"); len(h) != 1 {
		t.Fatalf("refused append stored %d snapshots", len(h)-1)
	}
}
