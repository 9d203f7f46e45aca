package budget_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/budget"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/warrant"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

var (
	ctx   = context.Background()
	start = time.Date(2026, 12, 7, 14, 5, 0, 0, time.UTC)
	bot   = gate.Input{Agent: audit.Principal{Name: "bot"}, Action: warrant.Action{ActionID: "a", Kind: "read", Risk: "low", Reversible: true}}
)

func sixtyAMinute(t testing.TB) *budget.Budgets {
	b, err := budget.Parse([]byte(`{"agents":{"bot":{"calls_per_minute":60}}}`))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// calls asks l n times and returns how many were MAY_ACT.
func calls(t *testing.T, l *budget.Layer, n int) int {
	t.Helper()
	passed := 0
	for range n {
		d, err := l.Decide(ctx, bot)
		if err != nil {
			t.Fatal(err)
		}
		if d.Decision == audit.VerdictMayAct {
			passed++
		}
	}
	return passed
}

func fixed(t time.Time) func() time.Time { return func() time.Time { return t } }

// The counts are the SQLite log's: 60 calls, a restart (the log closed and
// opened again), and the 61st call of the minute is DENY.
func TestSQLiteCountsSurviveARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.sqlite")
	log, err := sqlite.Create(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := calls(t, budget.NewLayer(sixtyAMinute(t), log, fixed(start.Add(time.Second))), 60); n != 60 {
		t.Fatalf("%d of the first 60 passed", n)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	log, err = sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	l := budget.NewLayer(sixtyAMinute(t), log, fixed(start.Add(59*time.Second)))
	d, err := l.Decide(ctx, bot)
	want := "budget.calls_per_minute: 60 of 60 used by agent bot in the minute from 2026-12-07T14:05:00Z"
	if err != nil || d.Decision != audit.VerdictDeny || d.Reasons[0] != want {
		t.Fatalf("61st call after the restart: %+v, %v", d, err)
	}
	if n := calls(t, budget.NewLayer(sixtyAMinute(t), log, fixed(start.Add(time.Minute))), 1); n != 1 {
		t.Fatal("the next minute's first call was refused")
	}
}

// Two replicas on one PostgreSQL (two handles, each its own pool) share
// the counts: 100 calls at once, split between them, pass exactly 60, and
// the next is DENY on either.
func TestPostgresReplicasShareTheCounts(t *testing.T) {
	url := pgtest.DB(t)
	if err := postgres.Init(ctx, url, ""); err != nil {
		t.Fatal(err)
	}
	var layers [2]*budget.Layer
	for i := range layers {
		log, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { log.Close() })
		layers[i] = budget.NewLayer(sixtyAMinute(t), log, fixed(start.Add(30*time.Second)))
	}
	var passed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Go(func() {
			d, err := layers[i%2].Decide(ctx, bot)
			if err != nil {
				errs <- err
				return
			}
			if d.Decision == audit.VerdictMayAct {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if passed.Load() != 60 {
		t.Fatalf("%d of 100 concurrent calls passed, want 60", passed.Load())
	}
	for i, l := range layers {
		d, err := l.Decide(ctx, bot)
		if err != nil || d.Decision != audit.VerdictDeny {
			t.Fatalf("replica %d after the 60: %+v, %v", i, d, err)
		}
		if want := fmt.Sprintf("budget.calls_per_minute: 60 of 60 used by agent bot in the minute from %s", start.Format(time.RFC3339)); d.Reasons[0] != want {
			t.Errorf("replica %d: reason %q", i, d.Reasons[0])
		}
	}
}
