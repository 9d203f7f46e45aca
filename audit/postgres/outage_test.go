package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/internal/pgurl"
)

// TestSurvivesDatabaseRestart: the server crashes (an immediate stop)
// under a database whose default is synchronous_commit=off: no decision
// Record returned for is lost; while the database is down, Record and
// RecordUse fail within the connect timeout, naming the log, instead of
// hanging; once it is back the same Log records again, no reopening, and
// the chain verifies.
func TestSurvivesDatabaseRestart(t *testing.T) {
	url := newDB(t)
	// A database tuned for ingest: asynchronous commits by default. The
	// log must not inherit that (it lost decisions here when it did).
	admin := connect(t, url)
	mustExec(t, admin, `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET synchronous_commit = off', current_database()); END $$`)
	admin.Close(ctx)
	l := openLog(t, url, postgres.Options{Settings: pgurl.Settings{ConnectTimeout: 2 * time.Second}})
	for i := range 10 {
		if err := l.Record(ctx, audittest.PendingDecision("P", i)); err != nil {
			t.Fatal(err)
		}
	}
	c := pgtest.Get(t)
	c.Stop(t)
	restarted := false
	defer func() {
		if !restarted {
			c.Start(t)
		}
	}()
	for _, what := range []string{"record", "consume"} {
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		var err error
		if what == "record" {
			err = l.Record(cctx, audittest.PendingDecision("P", 99))
		} else {
			err = l.RecordUse(cctx, audittest.UsingDecision("some-approval", 99))
		}
		cancel()
		if err == nil {
			t.Fatalf("%s succeeded with the database down", what)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("%s took %v to fail", what, took)
		}
		t.Logf("%s during the outage: %v", what, err)
	}
	c.Start(t)
	restarted = true
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := l.Record(ctx, audittest.PendingDecision("P", 100))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after the restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	rep := audittest.MustVerify(t, l)
	if rep.Decisions != 11 {
		t.Fatalf("report %+v; want the 10 before and the 1 after", rep)
	}
}
