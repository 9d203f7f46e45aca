package ledgersource_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/console/ledgersource"
	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Since pages through the snapshots in storage order, and agrees with
// History and Head, on the SQLite ledger through New.
func TestSinceFollowsStorageOrder(t *testing.T) {
	l, err := sqlite.Create(filepath.Join(t.TempDir(), "l.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	views := fill(t, l)
	src, err := ledgersource.New(l)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	checkSince(t, src, views)
}

// ForStore adapts both stores store.Open returns, the same way.
func TestForStoreBothStores(t *testing.T) {
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "l.db") },
		"postgres": func(t *testing.T) string { return pgtest.DB(t) },
	} {
		t.Run(name, func(t *testing.T) {
			l, err := store.Open(t.Context(), dsn(t), store.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			views := fill(t, l)
			src, err := ledgersource.ForStore(l)
			if err != nil {
				t.Fatal(err)
			}
			checkSince(t, src, views)
			sum, err := src.Verify(t.Context())
			if err != nil || !strings.Contains(sum, "6 snapshots") {
				t.Fatalf("verify: %q %v", sum, err)
			}
		})
	}
}

// A store.Ledger that cannot be followed is refused, not misread.
func TestForStoreRefusesWithoutSnapshotsSince(t *testing.T) {
	_, err := ledgersource.ForStore(noSince{})
	if err == nil || !strings.Contains(err.Error(), "SnapshotsSince") {
		t.Fatalf("got %v, want a refusal naming SnapshotsSince", err)
	}
}

// noSince is a store.Ledger without SnapshotsSince (its methods are never
// called).
type noSince struct{ store.Ledger }

// fill puts six snapshots, two per proposition, in one batch.
func fill(t *testing.T, l interface {
	Put(context.Context, []*warrant.View) (ledger.PutResult, error)
}) []*warrant.View {
	t.Helper()
	var views []*warrant.View
	for i := range 6 {
		v, err := warrant.DecodeView(snapshottest.SyntheticView(i/2, i%2))
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, v)
	}
	if _, err := l.Put(t.Context(), views); err != nil {
		t.Fatal(err)
	}
	return views
}

func checkSince(t *testing.T, src console.EvidenceSource, views []*warrant.View) {
	t.Helper()
	ctx := t.Context()
	first, err := src.Since(ctx, 0, 4)
	if err != nil || len(first) != 4 {
		t.Fatalf("Since(0, 4): %d rows, %v", len(first), err)
	}
	rest, err := src.Since(ctx, first[3].Seq, 10)
	if err != nil || len(rest) != 2 {
		t.Fatalf("Since(%d): %d rows, %v", first[3].Seq, len(rest), err)
	}
	all := append(first, rest...)
	for i, s := range all {
		if s.ViewID != views[i].ViewID || s.PropositionID != views[i].PropositionID || s.CreatedAt.IsZero() {
			t.Fatalf("row %d: %+v, want %s/%s", i, s, views[i].PropositionID, views[i].ViewID)
		}
	}
	h, _ := src.History(ctx, views[0].PropositionID)
	if len(h) != 2 || h[1].Seq != all[1].Seq {
		t.Fatalf("History %+v disagrees with Since", h)
	}
	head, _ := src.Head(ctx)
	if head.Seq == 0 || head.Hash == "" {
		t.Fatalf("head %+v", head)
	}
}
