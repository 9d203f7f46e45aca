package ledger_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

type ledgerStore struct{ l *ledger.Ledger }

func (s ledgerStore) Put(v *warrant.View) (bool, error) {
	res, err := s.l.Put(context.Background(), []*warrant.View{v})
	return res.Stored == 1, err
}

func TestHistoryTable(t *testing.T) {
	snapshottest.Run(t, func(t *testing.T) snapshottest.Store { return ledgerStore{newLedger(t)} })
}

func TestPutGetLatest(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t)
	v := decode(t, viewP)
	res := put(t, l, v)
	if res.Stored != 1 || res.Views[0].Seq != 1 {
		t.Fatalf("result %+v", res)
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
	_, err = l.Latest(ctx, "P-none")
	wantCode(t, err, warrant.CodeMissingView)
	_, err = l.Get(ctx, "P-db", "v-none")
	wantCode(t, err, warrant.CodeMissingView)
}

func TestBatchIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t)
	good := decode(t, viewP)
	bad := decode(t, viewP)
	bad.ViewID = "v2"
	bad.Evidence[0].Content = "rewritten"
	other := decode(t, strings.ReplaceAll(viewP, "P-db", "P-other"))
	_, err := l.Put(ctx, []*warrant.View{good, other, bad})
	var be *ledger.BatchError
	if !errors.As(err, &be) || be.Index != 2 {
		t.Fatalf("want BatchError at index 2, got %v", err)
	}
	wantCode(t, err, warrant.CodeImmutableRecord)
	if _, err := l.Latest(ctx, "P-other"); err == nil {
		t.Fatal("a refused batch left a view behind")
	}
	if rep, err := l.Verify(ctx); err != nil || rep.Events != 0 {
		t.Fatalf("verify after refusal: %+v %v", rep, err)
	}
}

func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "missing.db")
	_, err := ledger.Open(path, ledger.Options{ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), "ledger not found") {
		t.Fatalf("open missing: %v", err)
	}
	w, err := ledger.OpenOrCreate(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, w, decode(t, viewP))
	w.Close()
	r, err := ledger.Open(path, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Latest(ctx, "P-db"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Put(ctx, []*warrant.View{decode(t, viewP)}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("put on read-only ledger: %v", err)
	}
}

func TestSchemaVersionMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ewp.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	db := rawDB(t, path)
	mustExec(t, db, `DROP TRIGGER ledger_meta_no_UPDATE`)
	mustExec(t, db, `UPDATE ledger_meta SET value = '99' WHERE key = 'schema_version'`)
	db.Close()
	_, err = ledger.Open(path, ledger.Options{})
	if !errors.Is(err, ledger.ErrSchemaVersion) || !strings.Contains(err.Error(), "schema_version 99") {
		t.Fatalf("open: %v", err)
	}
}

func TestUpdateAndDeleteRefusedByDatabase(t *testing.T) {
	l := newLedger(t)
	put(t, l, decode(t, viewP))
	err := l.AppendPrimitives(context.Background(), func([]ledger.PrimitiveRow) ([]ledger.PrimitiveRow, error) {
		return []ledger.PrimitiveRow{{ID: "p", NameFold: "p", Body: []byte("{}")}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, l.Path())
	defer db.Close()
	for _, q := range []string{
		`UPDATE snapshots SET view_id = 'x'`, `DELETE FROM snapshots`,
		`UPDATE events SET hash = x'00'`, `DELETE FROM events`,
		`UPDATE records SET sum = x'00'`, `DELETE FROM records`,
		`DELETE FROM ledger_meta`, `DELETE FROM primitive_revisions`,
	} {
		if _, err := db.Exec(q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func TestAppendEvidenceAndCheck(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t)
	put(t, l, decode(t, viewP))
	e := warrant.Evidence{EvidenceID: "e2", Polarity: warrant.Opposes, Content: "psql says 16",
		ObservedAt: "2026-09-20T00:00:00Z", Source: warrant.SourceRef{ContentHash: "h2", ObservedAt: "2026-09-20T00:00:00Z"}}
	res, err := l.AppendEvidence(ctx, "P-db", e)
	if err != nil || !res.Stored {
		t.Fatalf("append: %+v %v", res, err)
	}
	again, err := l.AppendEvidence(ctx, "P-db", e)
	if err != nil || again.Stored || again.View.ViewID != res.View.ViewID {
		t.Fatalf("retried append: %+v %v", again, err)
	}
	latest, _ := l.Latest(ctx, "P-db")
	if latest.ViewID != res.View.ViewID || len(latest.Evidence) != 2 {
		t.Fatalf("latest %s with %d evidence", latest.ViewID, len(latest.Evidence))
	}
	_, err = l.AppendCheck(ctx, "P-none", warrant.Check{CheckID: "k"})
	wantCode(t, err, warrant.CodeMissingView)
	e.Source.ContentHash = ""
	e.EvidenceID = "e3"
	_, err = l.AppendEvidence(ctx, "P-db", e)
	wantCode(t, err, warrant.CodeMissingContentHash)
}

func TestAppendRespectsWholeHistory(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t)
	v1 := decode(t, viewP)
	v2 := decode(t, viewP)
	v2.ViewID, v2.Evidence = "v2", nil // e1 leaves the latest snapshot
	put(t, l, v1, v2)
	e := warrant.Evidence{EvidenceID: "e1", Polarity: warrant.Opposes, Content: "other",
		ObservedAt: "2026-09-20T00:00:00Z", Source: warrant.SourceRef{ContentHash: "h9", ObservedAt: "2026-09-20T00:00:00Z"}}
	_, err := l.AppendEvidence(ctx, "P-db", e)
	we := wantCode(t, err, warrant.CodeImmutableRecord)
	if !strings.Contains(we.Rule, `"v1"`) {
		t.Fatalf("refusal does not name the earlier view: %v", we)
	}
}

func TestList(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t)
	put(t, l, decode(t, viewP), decode(t, strings.NewReplacer("P-db", "P-cache", "PostgreSQL 13", "Redis 7").Replace(viewP)))
	cases := map[string][]string{
		"":                 {"P-cache", "P-db"},
		"p-DB":             {"P-db"},
		"postgre":          {"P-db"},
		"GRESQL":           {"P-db"},
		"redis":            {"P-cache"},
		"-c":               {"P-cache"},
		`"quoted" AND (x*`: nil,
		"production":       {"P-cache", "P-db"},
		"100%":             nil,
	}
	for q, want := range cases {
		got, err := l.List(ctx, q, 10)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		var ids []string
		for _, s := range got {
			ids = append(ids, s.PropositionID)
			if s.LatestViewID != "v1" || len(s.Texts) != 1 {
				t.Errorf("%q: summary %+v", q, s)
			}
		}
		if strings.Join(sortedCopy(ids), ",") != strings.Join(want, ",") {
			t.Errorf("List(%q) = %v, want %v", q, ids, want)
		}
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestPrimitives(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t)
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
	if len(cur) != 2 || string(cur[0].Body) != `{"v":2}` {
		t.Fatalf("current %+v", cur)
	}
	if v, _ := l.GraphVersion(ctx); v != 3 {
		t.Fatalf("graph version %d, want 3 (identical p2 row skipped)", v)
	}
	if rep, err := l.Verify(ctx); err != nil || rep.Primitives != 3 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func mustExec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

var _ snapshot.Lookup = snapshot.Map{}

func TestListFollowsLatestText(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t)
	v2 := decode(t, strings.NewReplacer(`"v1"`, `"v2"`, `"a1"`, `"a2"`, "PostgreSQL 13", "PostgreSQL 16").Replace(viewP))
	put(t, l, decode(t, viewP), v2)
	if got, _ := l.List(ctx, "PostgreSQL 13", 10); len(got) != 0 {
		t.Fatalf("a text the latest snapshot dropped still finds the proposition: %+v", got)
	}
	if got, _ := l.List(ctx, "postgresql 16", 10); len(got) != 1 || got[0].LatestViewID != "v2" {
		t.Fatalf("latest text not found: %+v", got)
	}
}

func TestAppendRevisitingAnOlderSnapshotIsRefused(t *testing.T) {
	ctx := context.Background()
	l := newLedger(t)
	a := decode(t, strings.Replace(viewP, `"view_id": "v1", `, "", 1)) // derived id, holds e1
	b := decode(t, viewP)
	b.ViewID, b.Evidence = "v2", nil
	put(t, l, a, b)
	e := a.Evidence[0]
	_, err := l.AppendEvidence(ctx, "P-db", e)
	we := wantCode(t, err, warrant.CodeImmutableRecord)
	if !strings.Contains(we.Rule, a.ViewID) {
		t.Fatalf("refusal does not name the earlier snapshot %s: %v", a.ViewID, we)
	}
}

func TestOpenOrCreateRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "race.db")
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			l, err := ledger.OpenOrCreate(path, ledger.Options{})
			if err == nil {
				_, err = l.Put(context.Background(), []*warrant.View{decode(t, viewP)})
				l.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent OpenOrCreate: %v", err)
		}
	}
}

func TestForeignDatabaseIsNotTouched(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db := rawDB(t, path)
	mustExec(t, db, `CREATE TABLE notes (x TEXT)`)
	db.Close()
	if _, err := ledger.OpenOrCreate(path, ledger.Options{}); err == nil || !strings.Contains(err.Error(), "not an EWP ledger") {
		t.Fatalf("OpenOrCreate on another program's database: %v", err)
	}
	db = rawDB(t, path)
	defer db.Close()
	var mode string
	var n int
	db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n)
	if mode != "delete" || n != 1 {
		t.Fatalf("the foreign database was changed: journal_mode %s, %d objects", mode, n)
	}
}
