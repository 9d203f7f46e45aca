package ledger_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/warrant"
)

// TestConcurrentAppendsAndReaders runs two writers (separate handles, as two
// processes would have) appending to one proposition and three readers
// polling it. Every append must land, and a reader must only ever see
// whole snapshots: each one holds every evidence item of the one before.
func TestConcurrentAppendsAndReaders(t *testing.T) {
	ctx := context.Background()
	base := newLedger(t)
	put(t, base, decode(t, viewP))
	const writers, appends, readers = 2, 40, 3
	open := func(ro bool) *ledger.Ledger {
		l, err := ledger.Open(base.Path(), ledger.Options{ReadOnly: ro})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	}
	done := make(chan struct{})
	var wg, rg sync.WaitGroup
	for w := range writers {
		l := open(false)
		wg.Go(func() {
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
		l := open(true)
		rg.Go(func() { readUntil(t, l, done) })
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
	hist, _ := base.History(ctx, "P-db")
	if len(hist) != 1+writers*appends {
		t.Fatalf("%d snapshots, want %d", len(hist), 1+writers*appends)
	}
	if _, err := base.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

func readUntil(t *testing.T, l *ledger.Ledger, done <-chan struct{}) {
	prev := map[string]bool{}
	for reads := 0; ; reads++ {
		select {
		case <-done:
			if reads == 0 {
				t.Error("reader never read")
			}
			return
		default:
		}
		v, err := l.Latest(context.Background(), "P-db")
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
