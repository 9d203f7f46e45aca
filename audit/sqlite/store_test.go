package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/sqlite"
)

func TestDefaultPath(t *testing.T) {
	if got := sqlite.DefaultPath("/var/lib/ewp/ewp.db"); got != "/var/lib/ewp/ewp.db.audit" {
		t.Fatalf("DefaultPath = %q", got)
	}
}

func TestOpenModes(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.audit")
	if _, err := sqlite.Open(missing, sqlite.Options{}); !errors.Is(err, sqlite.ErrLogNotFound) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("Open created the file")
	}
	l, _ := newLog(t)
	record(t, l, pendingDecision("P", 0))
	ro, err := sqlite.Open(l.Path(), sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.Record(ctx, pendingDecision("P", 1)); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("read-only Record: %v", err)
	}
	if _, err := sqlite.Create(l.Path(), sqlite.Options{}); err == nil {
		t.Fatal("Create over an existing log")
	}
	other := filepath.Join(dir, "other.db")
	raw := rawDB(t, other)
	mustExec(t, raw, `CREATE TABLE t (x)`)
	raw.Close()
	if _, err := sqlite.OpenOrCreate(other, sqlite.Options{}); err == nil || !strings.Contains(err.Error(), "not a decision log") {
		t.Fatalf("another program's database: %v", err)
	}
}

// TestListQueriesUseIndexes: no listing sorts (export streams with flat
// memory), and the server's and the inbox's lookups use their indexes.
func TestListQueriesUseIndexes(t *testing.T) {
	l, _ := newLog(t)
	d := record(t, l, pendingDecision("P", 0))
	raw := rawDB(t, l.Path())
	defer raw.Close()
	cases := []struct {
		q     sqlite.Query
		index string
	}{
		{sqlite.Query{}, ""},
		{sqlite.Query{NewestFirst: true, Filter: audit.Filter{After: d.ID}}, ""},
		{sqlite.Query{Filter: audit.Filter{Pending: true}}, "decisions_pending"},
		{sqlite.Query{NewestFirst: true, Filter: audit.Filter{Pending: true, Since: t0}}, "decisions_pending"},
		{sqlite.Query{Filter: audit.Filter{Since: t0, Until: t0.Add(time.Hour)}}, ""},
		{sqlite.Query{NewestFirst: true, Filter: audit.Filter{Since: t0, After: d.ID, PropositionID: "P"}}, "PRIMARY KEY"},
		{sqlite.Query{ApprovalID: "a"}, "decisions_approval"},
		{sqlite.Query{Filter: audit.Filter{Outcome: audit.OutcomeDeny}}, ""},
	}
	for _, c := range cases {
		query, args, err := l.SelectSQL(c.q)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := raw.Query("EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		p := strings.Join(plan, "; ")
		if strings.Contains(p, "TEMP B-TREE") || (c.index != "" && !strings.Contains(p, c.index)) {
			t.Errorf("%s\nplan: %s (want no sort, index %q)", query, p, c.index)
		}
	}
}

// TestWritersShareOneFile: two logs open on one file (two servers on one
// ledger, or the server and ewp-audit) write in turn and concurrently;
// each sees the other's commits before extending the chain, so the chain
// stays one and verifies. A writer that trusted the head it committed
// last would fork it here.
func TestWritersShareOneFile(t *testing.T) {
	a, _ := newLog(t)
	b, err := sqlite.Open(a.Path(), sqlite.Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range 6 {
		l := a
		if i%2 == 1 {
			l = b
		}
		d := record(t, l, pendingDecision("P", i))
		if i == 2 {
			approveOnce(t, b, d.ID) // an event row from the other writer
		}
	}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			l := a
			if i%2 == 1 {
				l = b
			}
			if err := l.Record(ctx, pendingDecision("P", 100+i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, l := range []*sqlite.Log{a, b} {
		if rep := mustVerify(t, l); rep.Decisions != 38 || rep.Approvals != 1 {
			t.Fatalf("report %+v", rep)
		}
	}
}

// TestBodiesRowsAreCapped: a batch of large decisions is split into
// decision_bodies rows of at most 256 KiB (a lookup reads one whole row),
// one larger body gets a row of its own, and the log still reads back
// and verifies.
func TestBodiesRowsAreCapped(t *testing.T) {
	l, _ := newLog(t)
	ids := make([]string, 48)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			d := pendingDecision("P", i)
			d.Message = strings.Repeat("x", 20<<10)
			if i == 7 {
				d.Message = strings.Repeat("y", 300<<10) // over the cap alone
			}
			if err := l.Record(ctx, d); err != nil {
				t.Errorf("record %d: %v", i, err)
				return
			}
			ids[i] = d.ID
		})
	}
	wg.Wait()
	raw := rawDB(t, l.Path())
	defer raw.Close()
	var rows, biggest, overCap int
	if err := raw.QueryRow(`SELECT count(*), max(length(bodies)), count(*) FILTER (WHERE length(bodies) > 262144 AND n > 1) FROM decision_bodies`).
		Scan(&rows, &biggest, &overCap); err != nil {
		t.Fatal(err)
	}
	if overCap != 0 || rows < 4 || biggest < 300<<10 {
		t.Fatalf("%d rows, the largest %d bytes, %d over the cap with more than one body", rows, biggest, overCap)
	}
	for i, id := range ids {
		if d, err := l.Decision(ctx, id); err != nil || len(d.Message) < 20<<10 {
			t.Fatalf("decision %d: %v", i, err)
		}
	}
	if all, err := l.List(ctx, audit.Filter{Limit: 100}); err != nil || len(all) != len(ids) {
		t.Fatalf("list: %d %v", len(all), err)
	}
	mustVerify(t, l)
}

// A new log has 4 KiB pages, and its writer lets the WAL grow well past
// SQLite's 1,000-page default before a commit checkpoints it: checkpoints
// hold up the commits behind them (audit/README.md). One commit per
// decision writes at least a few pages each, so 1,000 of them would have
// checkpointed at the default.
func TestPagesAndCheckpoints(t *testing.T) {
	l, _ := newLog(t)
	db := rawDB(t, l.Path())
	defer db.Close()
	var page int
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&page); err != nil || page != 4096 {
		t.Fatalf("page size %d (%v), want 4096", page, err)
	}
	for i := range 1000 {
		record(t, l, pendingDecision("P", i))
	}
	// The frames in the WAL now: a checkpoint would have started it over.
	var busy, frames, copied int
	if err := db.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil {
		t.Fatal(err)
	}
	if frames <= 1000 {
		t.Fatalf("%d frames in the WAL after 1,000 commits: the writer checkpointed at SQLite's default of 1,000", frames)
	}
}
