package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/internal/pgurl"
)

// TestFrozenDatabase: with the server frozen (SIGSTOP: connections open,
// nothing answers), a Record or a RecordUse gives up at its caller's
// deadline instead of hanging, and writes nothing: once the server thaws,
// the approval is unused and usable, the refused decisions are not on
// record, and the chain verifies.
func TestFrozenDatabase(t *testing.T) {
	url := newDB(t)
	l := openLog(t, url, postgres.Options{Settings: pgurl.Settings{ConnectTimeout: 2 * time.Second}})
	a := &audit.Approval{DecisionID: "", Verdict: audit.Approved, Approver: "ops", Once: true}
	d := audittest.PendingDecision("P-db", 1)
	if err := l.Record(ctx, d); err != nil {
		t.Fatal(err)
	}
	a.DecisionID = d.ID
	if err := l.Approve(ctx, a); err != nil {
		t.Fatal(err)
	}
	thaw := pgtest.Get(t).Freeze(t)
	var tried []*audit.Decision
	for _, write := range []func(*audit.Decision) error{
		func(d *audit.Decision) error { return l.RecordUse(cctx(t, time.Second), d) },
		func(d *audit.Decision) error { return l.Record(cctx(t, time.Second), d) },
	} {
		d := audittest.UsingDecision(a.ID, len(tried)+2)
		tried = append(tried, d)
		start := time.Now()
		err := write(d)
		if took := time.Since(start); err == nil || took > 5*time.Second {
			t.Fatalf("a write to the frozen database: %v after %v, want a failure by the deadline", err, took)
		}
		t.Logf("with the database frozen, after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	thaw()
	if _, err := l.UseOf(ctx, a.ID); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("the approval was used by a write that failed: %v", err)
	}
	for _, d := range tried {
		if _, err := l.Decision(ctx, d.ID); !errors.Is(err, audit.ErrNotFound) {
			t.Fatalf("decision %s, whose write failed, is on record: %v", d.ID, err)
		}
	}
	if err := l.RecordUse(ctx, audittest.UsingDecision(a.ID, 9)); err != nil {
		t.Fatalf("the approval after the thaw: %v", err)
	}
	if rep := audittest.MustVerify(t, l); rep.Decisions != 2 || rep.Uses != 1 {
		t.Fatalf("report %+v", rep)
	}
}

// cctx is a context ending after d, cancelled when t ends.
func cctx(t *testing.T, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(ctx, d)
	t.Cleanup(cancel)
	return c
}
