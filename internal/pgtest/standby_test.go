package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStandbyReplaysAndPauses: a standby made from the cluster serves the
// primary's rows, read-only; with replay paused it does not see a new row
// until replay resumes.
func TestStandbyReplaysAndPauses(t *testing.T) {
	db := DB(t)
	mustQuery(t, db, `CREATE TABLE t (x int)`)
	mustQuery(t, db, `INSERT INTO t VALUES (1)`)
	s := Get(t).Standby(t)
	sdb := s.On(db)
	var recovery bool
	if err := query1(sdb, `SELECT pg_is_in_recovery()`, &recovery); err != nil || !recovery {
		t.Fatalf("the standby is not in recovery: %v %v", recovery, err)
	}
	if n := count(t, sdb); n != 1 {
		t.Fatalf("standby sees %d rows, want 1", n)
	}
	if err := query1(sdb, `INSERT INTO t VALUES (9) RETURNING x`, new(int)); err == nil {
		t.Fatal("the standby took a write")
	}
	s.PauseReplay(t)
	mustQuery(t, db, `INSERT INTO t VALUES (2)`)
	if n := count(t, sdb); n != 1 {
		t.Fatalf("paused standby sees %d rows, want 1", n)
	}
	s.ResumeReplay(t)
	s.WaitCaughtUp(t)
	if n := count(t, sdb); n != 2 {
		t.Fatalf("resumed standby sees %d rows, want 2", n)
	}
}

func mustQuery(t *testing.T, url, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func count(t *testing.T, url string) int {
	t.Helper()
	var n int
	if err := query1(url, `SELECT count(*) FROM t`, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
