package ledgersource_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/console/ledgersource"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// Since pages through the snapshots in storage order, and agrees with
// History and Head.
func TestSinceFollowsStorageOrder(t *testing.T) {
	ctx := context.Background()
	l, err := ledger.Create(filepath.Join(t.TempDir(), "l.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var views []*warrant.View
	for i := range 6 {
		v, err := warrant.DecodeView(snapshottest.SyntheticView(i/2, i%2))
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, v)
	}
	if _, err := l.Put(ctx, views); err != nil {
		t.Fatal(err)
	}
	src, err := ledgersource.New(l)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
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
