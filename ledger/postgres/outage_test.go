package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/ledgertest"
	"github.com/ewp-go/ewp/warrant"
)

// TestSurvivesARestart: while the server is down, reads and writes fail
// within the connect timeout with a *ledger.Error (a storage failure, not
// a refusal), never hang; once it is back the same handle works again
// without being reopened, and nothing committed was lost.
func TestSurvivesARestart(t *testing.T) {
	l, _ := newLedger(t)
	v, _ := warrant.DecodeView([]byte(ledgertest.ViewP))
	if _, err := l.Put(ctxT(t), []*warrant.View{v}); err != nil {
		t.Fatal(err)
	}
	c := pgtest.Get(t)
	c.Stop(t)
	start := time.Now()
	_, err := l.Latest(ctxT(t), "P-db")
	var le *ledger.Error
	if !errors.As(err, &le) {
		t.Fatalf("read during the outage: %v, want a *ledger.Error", err)
	}
	_, err = l.AppendEvidence(ctxT(t), "P-db", warrant.Evidence{EvidenceID: "e9", Polarity: warrant.Supports, Content: "c",
		ObservedAt: "2026-09-20T00:00:00Z", Source: warrant.SourceRef{ContentHash: "h", ObservedAt: "2026-09-20T00:00:00Z"}})
	if !errors.As(err, &le) {
		t.Fatalf("write during the outage: %v, want a *ledger.Error", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("failing took %v", d)
	}
	t.Logf("during the outage: %v", err)
	c.Start(t)
	var got *warrant.View
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got, err = l.Latest(ctxT(t), "P-db"); err == nil {
			break
		}
	}
	if err != nil || got.ViewID != "v1" {
		t.Fatalf("after the restart: %v", err)
	}
	if _, err := l.Verify(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}
