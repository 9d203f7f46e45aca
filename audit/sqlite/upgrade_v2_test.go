package sqlite_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/audit/sqlite/v2fixture"
)

// v2History is a version 2 log written as version 2 wrote it. Events:
// 1 d[0] pending P-db, 2 d[1] MAY_ACT under an idempotency key, 3-5 d[2]
// MAY_ACT P-db, d[3] MAY_ACT P-other and d[4] DENY P-other in one commit,
// 6 a once approval of d[0], 7 its use by d[5], 8 d[5] MAY_ACT presenting
// it, 9 d[6] pending P-other, 10 d[7] MAY_ACT whose id is older than all
// the others'. In version 3, d[2], d[3] and d[4] need no decisions row.
type v2History struct {
	path     string
	head     audit.Head
	d        []*audit.Decision
	approval *audit.Approval
}

func writeV2(t testing.TB) *v2History {
	t.Helper()
	h := &v2History{path: filepath.Join(t.TempDir(), "ewp.db.audit")}
	old := audit.NewID()
	c := &clock{t: t0.Add(time.Hour)}
	l, err := v2fixture.Create(h.path, c.now)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dec := func(i int, outcome audit.Outcome, prop string) *audit.Decision {
		d := pendingDecision(prop, i)
		d.Outcome, d.Time = outcome, t0.Add(time.Duration(i)*time.Minute)
		return d
	}
	h.d = []*audit.Decision{
		dec(0, audit.OutcomeRequireConfirmation, "P-db"), dec(1, audit.OutcomeMayAct, "P-db"),
		dec(2, audit.OutcomeMayAct, "P-db"), dec(3, audit.OutcomeMayAct, "P-other"), dec(4, audit.OutcomeDeny, "P-other"),
		dec(5, audit.OutcomeMayAct, "P-db"), dec(6, audit.OutcomeRequireConfirmation, "P-other"), dec(7, audit.OutcomeMayAct, "P-db"),
	}
	h.d[1].IdempotencyKey = "retry-1"
	h.d[7].ID = old
	h.approval = &audit.Approval{Verdict: audit.Approved, Approver: "ops", Once: true}
	steps := []func() error{
		func() error { return l.Record(h.d[0]) },
		func() error { return l.Record(h.d[1]) },
		func() error { return l.Record(h.d[2], h.d[3], h.d[4]) },
		func() error { h.approval.DecisionID = h.d[0].ID; return l.Approve(h.approval) },
		func() error { h.d[5].ID = audit.NewID(); return l.Consume(h.approval.ID, h.d[5].ID) },
		func() error { h.d[5].ApprovalID = h.approval.ID; return l.Record(h.d[5]) },
		func() error { return l.Record(h.d[6]) },
		func() error { return l.Record(h.d[7]) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("version 2 write %d: %v", i+1, err)
		}
	}
	if h.head, err = l.Head(ctx); err != nil || h.head.Seq != 10 {
		t.Fatalf("version 2 head: %v %v", h.head, err)
	}
	return h
}

// wantV2 fails unless the file at path is still a version 2 log holding
// n decisions rows.
func wantV2(t testing.TB, path string, n int64) {
	t.Helper()
	v, rows, err := v2fixture.Version(path)
	if err != nil || v != "2" || rows != n {
		t.Fatalf("the log is not the version 2 log it was: schema_version %q, %d decisions (want 2, %d): %v", v, rows, n, err)
	}
}

func TestUpgradeV2(t *testing.T) {
	h := writeV2(t)
	rep, err := sqlite.Upgrade(ctx, h.path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := sqlite.UpgradeReport{Path: h.path, From: 2, To: 3, Upgraded: true, Events: 10, Decisions: 8, Approvals: 1, Uses: 1,
		BodyRows: 2, HeadBefore: h.head, HeadAfter: h.head} // bodies of events 1-5, 8-10
	if rep != want {
		t.Fatalf("report\n got %+v\nwant %+v", rep, want)
	}
	if n := decisionRows(t, h.path); n != 5 {
		t.Errorf("decisions rows after upgrade: %d, want 5 (d[0], d[1], d[5], d[6], d[7])", n)
	}
	if got, want := schemaOf(t, h.path), schemaOf(t, newLogPath(t)); got != want {
		t.Errorf("upgraded schema differs from a new log's:\n got %s\nwant %s", got, want)
	}
	l, err := sqlite.Open(h.path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	vr := mustVerify(t, l)
	if vr.Head != h.head || vr.Events != 10 || vr.Decisions != 8 || vr.Approvals != 1 || vr.Uses != 1 {
		t.Fatalf("verify after upgrade: %+v, want head %s", vr, h.head)
	}
	for _, d := range h.d {
		got, err := l.Decision(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameDecision(t, got, d)
	}
	got, err := l.ByIdempotencyKey(ctx, "agent-1", "retry-1")
	if err != nil {
		t.Fatal(err)
	}
	sameDecision(t, got, h.d[1])
	lists := []struct {
		name string
		q    sqlite.Query
		want []int
	}{
		{"all", sqlite.Query{}, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"newest first", sqlite.Query{NewestFirst: true, Filter: audit.Filter{Limit: 3}}, []int{7, 6, 5}},
		{"pending", sqlite.Query{Filter: audit.Filter{Pending: true}}, []int{6}},
		{"DENY", sqlite.Query{Filter: audit.Filter{Outcome: audit.OutcomeDeny}}, []int{4}},
		{"proposition", sqlite.Query{Filter: audit.Filter{PropositionID: "P-other"}}, []int{3, 4, 6}},
		{"time window", sqlite.Query{Filter: audit.Filter{Since: t0.Add(2 * time.Minute), Until: t0.Add(5 * time.Minute)}}, []int{2, 3, 4}},
		{"after", sqlite.Query{Filter: audit.Filter{After: h.d[3].ID}}, []int{4, 5, 6, 7}},
		{"approval", sqlite.Query{ApprovalID: h.approval.ID}, []int{5}},
	}
	for _, c := range lists {
		var ids []string
		if err := l.Each(ctx, c.q, func(d *audit.Decision) error { ids = append(ids, d.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		var wantIDs []string
		for _, i := range c.want {
			wantIDs = append(wantIDs, h.d[i].ID)
		}
		if strings.Join(ids, " ") != strings.Join(wantIDs, " ") {
			t.Errorf("list %s: got %v, want %v", c.name, ids, wantIDs)
		}
	}
	if u, err := l.UseOf(ctx, h.approval.ID); err != nil || u.UsedBy != h.d[5].ID {
		t.Fatalf("UseOf: %+v %v", u, err)
	}
}

// TestUpgradedV2TakesNewWrites: an upgraded version 2 log refuses the
// keys and ids it holds, records on from its head and answers its
// pending decision.
func TestUpgradedV2TakesNewWrites(t *testing.T) {
	h := writeV2(t)
	l, err := sqlite.Open(h.path, sqlite.Options{Now: (&clock{t: t0.Add(2 * time.Hour)}).now}) // a writer's Open upgrades
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	keyed := mayAct("P-db", 10)
	keyed.IdempotencyKey = "retry-1"
	if err := l.Record(ctx, keyed); !errors.Is(err, audit.ErrDuplicateKey) {
		t.Fatalf("a key used in version 2: %v", err)
	}
	for _, i := range []int{3, 7} {
		again := mayAct("P-db", 11)
		again.ID = h.d[i].ID
		if err := l.Record(ctx, again); err == nil || !strings.Contains(err.Error(), "already recorded") {
			t.Fatalf("the id of d[%d] again: %v", i, err)
		}
	}
	d := record(t, l, mayAct("P-db", 12))
	approveOnce(t, l, h.d[6].ID)
	rep, err := l.VerifyHead(ctx, h.head)
	if err != nil || rep.Events != 12 || rep.Decisions != 9 {
		t.Fatalf("verify after new writes: %+v %v", rep, err)
	}
	got, err := l.Decision(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameDecision(t, got, d)
}

// TestUpgradeRefusesBrokenV2: a version 2 log edited behind its triggers'
// back is not converted; the break is named and the file stays version 2,
// byte for byte.
func TestUpgradeRefusesBrokenV2(t *testing.T) {
	testRefusesBroken(t, 2, []brokenCase{
		{"a decision's outcome column", "decisions_no_UPDATE", `UPDATE decisions SET outcome = 'DENY' WHERE seq = 3`, 3, "decisions", "outcome"},
		{"a body", "decision_bodies_no_UPDATE",
			`UPDATE decision_bodies SET bodies = CAST(replace(CAST(bodies AS TEXT), 'psql', 'bash') AS BLOB) WHERE first_event = 3`, 3, "decisions", "body or its hash was edited"},
		{"a deleted decision that version 3 keeps no row for", "decisions_no_DELETE", `DELETE FROM decisions WHERE seq = 4`, 4, "decisions", "gone"},
		{"an event payload", "events_no_UPDATE", `UPDATE events SET payload = replace(payload, 'approved', 'rejected') WHERE seq = 6`, 6, "approvals", "event itself was edited"},
		{"a deleted event", "events_no_DELETE", `DELETE FROM events WHERE seq = 7`, 8, "decisions", "event 7 is missing"},
		{"a row behind the chain", "", `INSERT INTO approval_uses (seq, approval_id, used_by, used_ns) VALUES (99, 'a-x', 'd-x', 0)`, 0, "approval_uses", "not recorded by any event"},
		{"a dropped trigger", "", `DROP TRIGGER decisions_no_DELETE`, 0, "decisions", "decisions_no_DELETE is missing"},
	}, func(t testing.TB) string { return writeV2(t).path },
		func(_ testing.TB, name string) string { return triggerSQL(name) }, // version 2 spells them as version 3
		wantV2)
}

// TestUpgradeInterruptedLeavesV2: an upgrade failing at any stage rolls
// back to the version 2 log, which then upgrades cleanly.
func TestUpgradeInterruptedLeavesV2(t *testing.T) {
	for _, stage := range []string{"copied", "dropped", "commit"} {
		t.Run(stage, func(t *testing.T) {
			h := writeV2(t)
			hit := false
			opt := sqlite.WithUpgradeFault(sqlite.Options{}, func(s string) error {
				if s == stage {
					hit = true
					return fmt.Errorf("injected failure at %s", s)
				}
				return nil
			})
			rep, err := sqlite.Upgrade(ctx, h.path, opt)
			if err == nil || rep.Upgraded || !hit || !strings.Contains(err.Error(), "nothing was changed") {
				t.Fatalf("interrupted upgrade: %+v %v (stage reached: %v)", rep, err, hit)
			}
			wantV2(t, h.path, 8)
			rep, err = sqlite.Upgrade(ctx, h.path, sqlite.Options{})
			if err != nil || !rep.Upgraded || rep.From != 2 || rep.HeadAfter != h.head {
				t.Fatalf("upgrade after the failure: %+v %v", rep, err)
			}
		})
	}
}

// TestOpenRefusesV2ReadOnly: a ReadOnly Open refuses a version 2 log and
// names the command that upgrades it.
func TestOpenRefusesV2ReadOnly(t *testing.T) {
	h := writeV2(t)
	ro, err := sqlite.Open(h.path, sqlite.Options{ReadOnly: true})
	if !errors.Is(err, sqlite.ErrSchemaVersion) || !strings.Contains(err.Error(), "ewp-audit upgrade --audit "+h.path) {
		if ro != nil {
			ro.Close()
		}
		t.Fatalf("read-only Open of a version 2 log: %v", err)
	}
	wantV2(t, h.path, 8)
}
