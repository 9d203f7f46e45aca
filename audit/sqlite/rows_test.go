package sqlite_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/sqlite"
)

// mayAct is a MAY_ACT decision with no key and no approval: one that
// needs no decisions row when its id is in order.
func mayAct(prop string, i int) *audit.Decision {
	d := pendingDecision(prop, i)
	d.Outcome = audit.OutcomeMayAct
	return d
}

// rowsLog writes decisions of every kind one commit each and returns the
// log, its path and the decisions. Events: 1 m[0] MAY_ACT, 2 m[1]
// MAY_ACT, 3 m[2] pending, 4 m[3] MAY_ACT whose id is older than all
// (out of order), 5 m[4] MAY_ACT. Only m[2] and m[3] are special.
func rowsLog(t *testing.T) (*sqlite.Log, []*audit.Decision) {
	t.Helper()
	l, _ := newLog(t)
	old := audit.NewID()
	m := []*audit.Decision{mayAct("P-a", 0), mayAct("P-b", 1), pendingDecision("P-a", 2), mayAct("P-a", 3), mayAct("P-b", 4)}
	m[3].ID = old
	for _, d := range m {
		record(t, l, d)
	}
	return l, m
}

// decisionRows is how many rows the decisions table holds.
func decisionRows(t *testing.T, path string) int {
	t.Helper()
	raw := rawDB(t, path)
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM decisions`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOnlySpecialDecisionsHaveRows: in-order MAY_ACT decisions are
// recorded without a decisions row, and are still found by id, listed,
// paged and verified; an out-of-order id, a pending decision have rows.
func TestOnlySpecialDecisionsHaveRows(t *testing.T) {
	l, m := rowsLog(t)
	if n := decisionRows(t, l.Path()); n != 2 {
		t.Fatalf("decisions rows: %d, want 2 (the pending one and the out-of-order one)", n)
	}
	for _, d := range m {
		got, err := l.Decision(ctx, d.ID)
		if err != nil {
			t.Fatalf("Decision %s: %v", d.ID, err)
		}
		sameDecision(t, got, d)
	}
	if _, err := l.Decision(ctx, audit.NewID()); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("an unknown id: %v", err)
	}
	ids := func(q sqlite.Query) string {
		t.Helper()
		var got []string
		if err := l.Each(ctx, q, func(d *audit.Decision) error { got = append(got, d.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, " ")
	}
	want := func(i ...int) string {
		var s []string
		for _, k := range i {
			s = append(s, m[k].ID)
		}
		return strings.Join(s, " ")
	}
	cases := []struct {
		name string
		q    sqlite.Query
		want string
	}{
		{"all", sqlite.Query{}, want(0, 1, 2, 3, 4)},
		{"after a decision without a row", sqlite.Query{Filter: audit.Filter{After: m[1].ID}}, want(2, 3, 4)},
		{"after the out-of-order one", sqlite.Query{Filter: audit.Filter{After: m[3].ID}}, want(4)},
		{"newest first after one without a row", sqlite.Query{NewestFirst: true, Filter: audit.Filter{After: m[4].ID, Limit: 2}}, want(3, 2)},
		{"MAY_ACT of P-a", sqlite.Query{Filter: audit.Filter{Outcome: audit.OutcomeMayAct, PropositionID: "P-a"}}, want(0, 3)},
		{"pending", sqlite.Query{Filter: audit.Filter{Pending: true}}, want(2)},
		{"limit", sqlite.Query{Filter: audit.Filter{Limit: 2}}, want(0, 1)},
	}
	for _, c := range cases {
		if got := ids(c.q); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
	if err := l.Each(ctx, sqlite.Query{Filter: audit.Filter{Outcome: "MAYBE"}}, func(*audit.Decision) error { return nil }); err == nil || !strings.Contains(err.Error(), "want MAY_ACT") {
		t.Fatalf("an unknown outcome: %v", err)
	}
	// Approve finds a decision without a row, and refuses it as not
	// pending (not as unknown).
	if err := l.Approve(ctx, &audit.Approval{DecisionID: m[1].ID, Verdict: audit.Approved, Approver: "ops"}); !errors.Is(err, audit.ErrNotPending) {
		t.Fatalf("approve a MAY_ACT decision: %v", err)
	}
	if rep := mustVerify(t, l); rep.Decisions != 5 || rep.Events != 5 {
		t.Fatalf("verify: %+v", rep)
	}
}

// TestTakenIDsAreRefused: an id already recorded is refused whether its
// decision has a row or only a body, and of concurrent Records under one
// new id exactly one is stored.
func TestTakenIDsAreRefused(t *testing.T) {
	l, m := rowsLog(t)
	for _, d := range m {
		again := mayAct("P-x", 9)
		again.ID = d.ID
		if err := l.Record(ctx, again); err == nil || !strings.Contains(err.Error(), "already recorded") {
			t.Fatalf("id %s recorded twice: %v", d.ID, err)
		}
	}
	id := audit.NewID()
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored := 0
	for i := range 16 {
		wg.Go(func() {
			d := mayAct("P-x", i)
			d.ID = id
			err := l.Record(ctx, d)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				stored++
			} else if !strings.Contains(err.Error(), "already recorded") {
				t.Errorf("record: %v", err)
			}
		})
	}
	wg.Wait()
	if stored != 1 {
		t.Fatalf("%d Records under one id were stored, want 1", stored)
	}
	if rep := mustVerify(t, l); rep.Decisions != 6 {
		t.Fatalf("verify: %+v", rep)
	}
}

// TestRowsTamperIsDetected: the edits that only version 3's layout
// allows, on rowsLog's file (events 1-5 each in a decision_bodies row of
// its own; m[2] and m[3] have decisions rows, seq 3 and 4).
func TestRowsTamperIsDetected(t *testing.T) {
	cases := []struct {
		name    string
		trigger string
		sql     string
		seq     int64
		table   string
		what    string
	}{
		{"a first_id cleared", "decision_bodies_no_UPDATE", `UPDATE decision_bodies SET first_id = NULL WHERE first_event = 2`, 2, "decision_bodies", "first_id … last_id NULL"},
		{"a last_id moved on", "decision_bodies_no_UPDATE", `UPDATE decision_bodies SET last_id = last_id || 'z' WHERE first_event = 5`, 5, "decision_bodies", "last_id"},
		{"an out-of-order row given a range", "decision_bodies_no_UPDATE",
			`UPDATE decision_bodies SET first_id = (SELECT decision_id FROM decisions WHERE seq = 4), last_id = (SELECT decision_id FROM decisions WHERE seq = 4) WHERE first_event = 4`,
			4, "decision_bodies", "in-order ids it holds are NULL"},
		{"a row added for a decision without one", "",
			`INSERT INTO decisions (seq, event, decision_id, time_ns, outcome, proposition_id, credential, idem_key, approval_id, hash)
			SELECT 2, 2, first_id, 0, 'DENY', 'P-b', 'agent-1', NULL, '', head FROM decision_bodies WHERE first_event = 2`,
			0, "decisions", "inserted behind the chain"},
		{"a pending decision's row deleted", "decisions_no_DELETE", `DELETE FROM decisions WHERE seq = 3`, 3, "decisions", "is gone"},
		{"an out-of-order decision's row deleted", "decisions_no_DELETE", `DELETE FROM decisions WHERE seq = 4`, 4, "decisions", "is gone"},
		{"the body of a decision without a row", "decision_bodies_no_UPDATE",
			`UPDATE decision_bodies SET bodies = CAST(replace(CAST(bodies AS TEXT), 'psql', 'bash') AS BLOB) WHERE first_event = 2`,
			2, "decision_bodies", "not its last decision's hash"},
		{"the last body, without a row", "decision_bodies_no_UPDATE",
			`UPDATE decision_bodies SET bodies = CAST(replace(CAST(bodies AS TEXT), 'psql', 'bash') AS BLOB) WHERE first_event = 5`,
			5, "decision_bodies", "not its last decision's hash"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, _ := rowsLog(t)
			path := l.Path()
			l.Close()
			db := rawDB(t, path)
			if c.trigger != "" {
				mustExec(t, db, `DROP TRIGGER `+c.trigger)
			}
			mustExec(t, db, c.sql)
			if c.trigger != "" {
				mustExec(t, db, triggerSQL(c.trigger))
			}
			db.Close()
			verifyBroken(t, path, nil, c.seq, c.table, c.what)
		})
	}
}

// TestIDsWithEscapesWithoutRows: a decision without a row whose id the
// JSON body escapes (a quote, a byte of invalid UTF-8) is still found by
// its id, and an id that only shares its prefix is not.
func TestIDsWithEscapesWithoutRows(t *testing.T) {
	l, _ := newLog(t)
	ids := []string{"zz-\"quoted\"", "zzz-\xff", "zzzz-<&>"}
	for i, id := range ids {
		d := mayAct("P", i)
		d.ID = id
		record(t, l, d)
	}
	if n := decisionRows(t, l.Path()); n != 0 {
		t.Fatalf("decisions rows: %d, want 0 (every id in order)", n)
	}
	for _, id := range ids {
		got, err := l.Decision(ctx, id)
		if err != nil || got.ID != audit.AsJSON(id) {
			t.Fatalf("Decision %q: %v %v", id, got, err)
		}
	}
	for _, id := range []string{"zz-\"quoted", "zzz-", "zzzz-<&>x"} {
		if _, err := l.Decision(ctx, id); !errors.Is(err, audit.ErrNotFound) {
			t.Fatalf("Decision %q: %v, want not found", id, err)
		}
	}
	mustVerify(t, l)
}
