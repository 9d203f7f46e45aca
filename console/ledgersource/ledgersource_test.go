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

// SearchText finds propositions by assertion text through the trigram
// index, in id order and up to the limit; a query too short for the index
// goes through the ledger's List.
func TestSearchText(t *testing.T) {
	ctx := context.Background()
	l, err := ledger.Create(filepath.Join(t.TempDir(), "l.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var views []*warrant.View
	for i := range 12 {
		v, err := warrant.DecodeView(snapshottest.SyntheticView(i, 0))
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
	got, err := src.SearchText(ctx, "HOST 11 runs", 10)
	if err != nil || len(got) != 1 || got[0] != "P-0000011" {
		t.Fatalf("SearchText(HOST 11 runs): %v %v", got, err)
	}
	got, _ = src.SearchText(ctx, "load balancer", 5)
	if len(got) != 5 || got[0] != "P-0000000" || got[4] != "P-0000004" {
		t.Fatalf("SearchText(load balancer, 5): %v", got)
	}
	if got, err := src.SearchText(ctx, "qz", 5); err != nil || len(got) != 0 {
		t.Fatalf("short query: %v %v", got, err)
	}
}
