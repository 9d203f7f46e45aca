package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func pgLedger(t testing.TB) string {
	return pgtest.FreshSchema(t)
}

// clock hands out a new instant per write, as a real ingest's would be.
type clock struct{ t time.Time }

func (c *clock) now() time.Time {
	c.t = c.t.Add(1234567 * time.Nanosecond)
	return c.t
}

// fill writes a history of several kinds of write into the ledger at dsn:
// batches, appends and graph revisions, interleaved, each its own
// transaction with its own created_at (some sub-second, as time.Now's are).
func fill(t *testing.T, dsn string, from, to int) {
	t.Helper()
	ctx := context.Background()
	c := &clock{time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC).Add(time.Duration(from) * time.Minute)}
	l, err := store.Open(ctx, dsn, store.Options{Create: true, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for round := from; round < to; round++ {
		var vs []*warrant.View
		for i := range 5 {
			v, err := warrant.DecodeView(snapshottest.SyntheticView(round*10+i%3, i))
			if err != nil {
				t.Fatal(err)
			}
			vs = append(vs, v)
		}
		if _, err := l.Put(ctx, vs); err != nil {
			t.Fatal(err)
		}
		prop := fmt.Sprintf("P-%07d", round*10)
		e := warrant.Evidence{EvidenceID: fmt.Sprintf("e-extra-%d", round), Polarity: warrant.Opposes, Content: "later",
			ObservedAt: "2026-09-22T00:00:00Z", Source: warrant.SourceRef{ContentHash: "h", ObservedAt: "2026-09-22T00:00:00Z"}}
		if _, err := l.AppendEvidence(ctx, prop, e); err != nil {
			t.Fatal(err)
		}
		err := l.AppendPrimitives(ctx, func([]ledger.PrimitiveRow) ([]ledger.PrimitiveRow, error) {
			return []ledger.PrimitiveRow{{ID: "file", NameFold: "file", Body: fmt.Appendf(nil, `{"round":%d}`, round)},
				{ID: fmt.Sprintf("p-%d", round), NameFold: fmt.Sprintf("n%d", round), Body: []byte(`{}`)}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func verified(t *testing.T, dsn string) ledger.Head {
	t.Helper()
	l, err := store.Open(context.Background(), dsn, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Verify(context.Background())
	if err != nil {
		t.Fatalf("verify %s: %v", dsn, err)
	}
	return rep.Head
}

// TestCopySQLiteToPostgresAndBack: a ledger copied from SQLite to
// PostgreSQL, and from there to a new SQLite file, has the same chain head
// in all three, and verify passes on each.
func TestCopySQLiteToPostgresAndBack(t *testing.T) {
	ctx := context.Background()
	a := filepath.Join(t.TempDir(), "a.db")
	fill(t, a, 0, 4)
	pg := pgLedger(t)
	rep, err := store.Copy(ctx, a, pg)
	if err != nil {
		t.Fatal(err)
	}
	ha := verified(t, a)
	if rep.Head != ha || rep.Events != ha.Seq || verified(t, pg) != ha {
		t.Fatalf("copy to PostgreSQL: report %+v, source head %v, destination %v", rep, ha, verified(t, pg))
	}
	b := filepath.Join(t.TempDir(), "b.db")
	if rep, err := store.Copy(ctx, pg, b); err != nil || rep.Head != ha {
		t.Fatalf("copy back: %+v %v", rep, err)
	}
	if hb := verified(t, b); hb != ha {
		t.Fatalf("round trip head %v, want %v", hb, ha)
	}
	// The copies answer as the original does.
	orig, _ := store.Open(ctx, a, store.Options{ReadOnly: true})
	defer orig.Close()
	cp, _ := store.Open(ctx, pg, store.Options{ReadOnly: true})
	defer cp.Close()
	for _, prop := range []string{"P-0000000", "P-0000012", "P-0000031"} {
		h1, _ := orig.History(ctx, prop)
		h2, _ := cp.History(ctx, prop)
		if fmt.Sprint(h1) != fmt.Sprint(h2) || len(h1) == 0 {
			t.Errorf("%s: history differs:\n%v\n%v", prop, h1, h2)
		}
	}
}

// TestCopyResumes: a second copy after the source grew copies only what is
// new; a destination with other events is refused.
func TestCopyResumes(t *testing.T) {
	ctx := context.Background()
	a := filepath.Join(t.TempDir(), "a.db")
	fill(t, a, 0, 2)
	pg := pgLedger(t)
	first, err := store.Copy(ctx, a, pg)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, a, 2, 3)
	second, err := store.Copy(ctx, a, pg)
	if err != nil {
		t.Fatal(err)
	}
	ha := verified(t, a)
	if first.Events+second.Events != ha.Seq || second.Head != ha || verified(t, pg) != ha {
		t.Fatalf("resumed copy: %+v then %+v, source head %v", first, second, ha)
	}
	other := filepath.Join(t.TempDir(), "other.db")
	fill(t, other, 7, 8)
	if _, err := store.Copy(ctx, a, other); err == nil || !strings.Contains(err.Error(), "not the source's") {
		t.Fatalf("copy into an unrelated ledger: %v", err)
	}
}

func TestOpenPicksTheStore(t *testing.T) {
	for dsn, pg := range map[string]bool{"postgres://h/db": true, "postgresql://h/db": true, "ewp.db": false, "/x/postgres://": false} {
		if store.IsPostgres(dsn) != pg {
			t.Errorf("IsPostgres(%q) = %v", dsn, !pg)
		}
	}
	_, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "missing.db"), store.Options{ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), "ledger not found") {
		t.Fatalf("open a missing file: %v", err)
	}
}
