package sqlite_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/audit/sqlite/v1fixture"
)

// v1History is a version 1 log written as version 1 wrote it, every kind
// of write interleaved. Events: 1 d[0] pending P-db, 2 d[1] MAY_ACT under
// an idempotency key, 3 d[2] pending P-db, 4 a once approval of d[0],
// 5 its use by d[3], 6 d[3] MAY_ACT presenting it, 7 d[4] DENY P-other,
// 8 d[5] pending P-other (never answered), 9 a rejection of d[2],
// 10 d[6] REFUSED with a code.
type v1History struct {
	path      string
	head      audit.Head
	d         []*audit.Decision
	approval  *audit.Approval
	rejection *audit.Approval
}

func writeV1(t testing.TB) *v1History {
	t.Helper()
	h := &v1History{path: filepath.Join(t.TempDir(), "ewp.db.audit")}
	c := &clock{t: t0.Add(time.Hour)}
	l, err := v1fixture.Create(h.path, c.now)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dec := func(i int, outcome, prop string) *audit.Decision {
		d := pendingDecision(prop, i)
		d.Outcome, d.Time = outcome, t0.Add(time.Duration(i)*time.Minute)
		return d
	}
	h.d = []*audit.Decision{
		dec(0, audit.OutcomeRequireConfirmation, "P-db"), dec(1, audit.OutcomeMayAct, "P-db"),
		dec(2, audit.OutcomeRequireConfirmation, "P-db"), dec(3, audit.OutcomeMayAct, "P-db"),
		dec(4, audit.OutcomeDeny, "P-other"), dec(5, audit.OutcomeRequireConfirmation, "P-other"),
		dec(6, audit.OutcomeRefused, ""),
	}
	h.d[1].IdempotencyKey = "retry-1"
	h.d[6].Code, h.d[6].Message = "EWP_REFUSE_LIMIT_EXCEEDED", "too large"
	h.d[3].ID = audit.NewID()
	h.approval = &audit.Approval{DecisionID: "", Verdict: audit.Approved, Approver: "ops", Once: true}
	h.rejection = &audit.Approval{Verdict: audit.Rejected, Approver: "ops", Note: "no"}
	steps := []func() error{
		func() error { return l.Record(h.d[0]) },
		func() error { return l.Record(h.d[1]) },
		func() error { return l.Record(h.d[2]) },
		func() error { h.approval.DecisionID = h.d[0].ID; return l.Approve(h.approval) },
		func() error { return l.Consume(h.approval.ID, h.d[3].ID) },
		func() error { h.d[3].ApprovalID = h.approval.ID; return l.Record(h.d[3]) },
		func() error { return l.Record(h.d[4]) },
		func() error { return l.Record(h.d[5]) },
		func() error { h.rejection.DecisionID = h.d[2].ID; return l.Approve(h.rejection) },
		func() error { return l.Record(h.d[6]) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("version 1 write %d: %v", i+1, err)
		}
	}
	if h.head, err = l.Head(ctx); err != nil || h.head.Seq != 10 {
		t.Fatalf("version 1 head: %v %v", h.head, err)
	}
	return h
}

// wantV1 fails unless the file at path is still a version 1 log holding
// n decisions.
func wantV1(t testing.TB, path string, n int64) {
	t.Helper()
	v, rows, err := v1fixture.Version(path)
	if err != nil || v != "1" || rows != n {
		t.Fatalf("the log is not the version 1 log it was: schema_version %q, %d decisions (want 1, %d): %v", v, rows, n, err)
	}
}

func TestUpgradeV1(t *testing.T) {
	h := writeV1(t)
	rep, err := sqlite.Upgrade(ctx, h.path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := sqlite.UpgradeReport{Path: h.path, From: 1, To: 3, Upgraded: true, Events: 10, Decisions: 7, Approvals: 2, Uses: 1,
		BodyRows: 3, HeadBefore: h.head, HeadAfter: h.head} // bodies of events 1-3, 6-8, 10
	if rep != want {
		t.Fatalf("report\n got %+v\nwant %+v", rep, want)
	}

	l, err := sqlite.Open(h.path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	vr := mustVerify(t, l)
	if vr.Head != h.head || vr.Events != 10 || vr.Decisions != 7 || vr.Approvals != 2 || vr.Uses != 1 {
		t.Fatalf("verify after upgrade: %+v, want head %s", vr, h.head)
	}
	if head, err := l.Head(ctx); err != nil || head != h.head {
		t.Fatalf("Head = %s %v, want %s", head, err, h.head)
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
		{"all", sqlite.Query{}, []int{0, 1, 2, 3, 4, 5, 6}},
		{"newest first", sqlite.Query{NewestFirst: true, Filter: audit.Filter{Limit: 2}}, []int{6, 5}},
		{"pending", sqlite.Query{Filter: audit.Filter{Pending: true}}, []int{5}},
		{"DENY", sqlite.Query{Filter: audit.Filter{Outcome: audit.OutcomeDeny}}, []int{4}},
		{"proposition", sqlite.Query{Filter: audit.Filter{PropositionID: "P-other"}}, []int{4, 5}},
		{"time window", sqlite.Query{Filter: audit.Filter{Since: t0.Add(2 * time.Minute), Until: t0.Add(5 * time.Minute)}}, []int{2, 3, 4}},
		{"after", sqlite.Query{Filter: audit.Filter{After: h.d[4].ID}}, []int{5, 6}},
		{"approval", sqlite.Query{ApprovalID: h.approval.ID}, []int{3}},
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
	if as, err := l.ApprovalsFor(ctx, h.d[0].ID); err != nil || len(as) != 1 || as[0].ID != h.approval.ID || !as[0].Once {
		t.Fatalf("ApprovalsFor: %+v %v", as, err)
	}
	if a, err := l.Approval(ctx, h.rejection.ID); err != nil || a.Verdict != audit.Rejected || a.Note != "no" {
		t.Fatalf("rejection: %+v %v", a, err)
	}
	if u, err := l.UseOf(ctx, h.approval.ID); err != nil || u.UsedBy != h.d[3].ID || u.Seq != 1 {
		t.Fatalf("UseOf: %+v %v", u, err)
	}
	// The file now has a new log's schema exactly, and events only for
	// approvals and uses.
	if got, want := schemaOf(t, h.path), schemaOf(t, newLogPath(t)); got != want {
		t.Errorf("upgraded schema differs from a new log's:\n got %s\nwant %s", got, want)
	}
	raw := rawDB(t, h.path)
	var events int
	if err := raw.QueryRow(`SELECT count(*) FROM events`).Scan(&events); err != nil || events != 3 {
		t.Errorf("events rows: %d %v, want 3 (2 approvals, 1 use)", events, err)
	}
	raw.Close()
}

// TestUpgradedLogTakesNewWrites: Records, an approval and its use append
// to an upgraded log, the chain going on from version 1's head.
func TestUpgradedLogTakesNewWrites(t *testing.T) {
	h := writeV1(t)
	if _, err := sqlite.Upgrade(ctx, h.path, sqlite.Options{}); err != nil {
		t.Fatal(err)
	}
	l, err := sqlite.Open(h.path, sqlite.Options{Now: (&clock{t: t0.Add(2 * time.Hour)}).now})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	keyed := pendingDecision("P-db", 10)
	keyed.IdempotencyKey = "retry-1" // taken in version 1 by d[1]
	if err := l.Record(ctx, keyed); !errors.Is(err, audit.ErrDuplicateKey) {
		t.Fatalf("a key used in version 1: %v", err)
	}
	d := record(t, l, pendingDecision("P-db", 11))
	a := approveOnce(t, l, h.d[5].ID)
	if err := l.RecordUse(ctx, audittest.UsingDecision(a.ID, 12)); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordUse(ctx, audittest.UsingDecision(h.approval.ID, 13)); !errors.Is(err, audit.ErrApprovalUsed) {
		t.Fatalf("a once approval used in version 1: %v", err)
	}
	rep, err := l.VerifyHead(ctx, h.head)
	if err != nil || rep.Events != 14 || rep.Decisions != 9 {
		t.Fatalf("verify after new writes: %+v %v", rep, err)
	}
	got, err := l.Decision(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameDecision(t, got, d)
}

// TestUpgradeRefusesBrokenV1: a version 1 log edited behind its triggers'
// back is not converted; the break is named and the file stays version 1.
func TestUpgradeRefusesBrokenV1(t *testing.T) {
	testRefusesBroken(t, 1, []brokenCase{
		{"a decision's outcome column", "decisions_no_UPDATE", `UPDATE decisions SET outcome = 'MAY_ACT' WHERE seq = 3`, 3, "decisions", "outcome"},
		{"a decision's body", "decisions_no_UPDATE",
			`UPDATE decisions SET body = CAST(replace(CAST(body AS TEXT), 'psql', 'bash') AS BLOB) WHERE seq = 2`, 2, "decisions", "body_sha256"},
		{"a deleted decision", "decisions_no_DELETE", `DELETE FROM decisions WHERE seq = 5`, 7, "decisions", "gone"},
		{"an event payload", "events_no_UPDATE", `UPDATE events SET payload = replace(payload, 'approved', 'rejected') WHERE seq = 4`, 4, "approvals", "event itself was edited"},
		{"a deleted event", "events_no_DELETE", `DELETE FROM events WHERE seq = 9`, 10, "decisions", "event 9 is missing"},
		{"a row behind the chain", "", `INSERT INTO approval_uses (seq, approval_id, used_by, used_ns) VALUES (99, 'a-x', 'd-x', 0)`, 0, "approval_uses", "not recorded by any event"},
		{"a dropped trigger", "", `DROP TRIGGER events_no_DELETE`, 0, "events", "events_no_DELETE is missing"},
	}, func(t testing.TB) string { return writeV1(t).path }, v1Trigger, wantV1)
}

// A brokenCase edits an old log behind its triggers' back (sql, with
// trigger dropped for it and put back, "" for none) and names the break
// Upgrade must report: the event seq, the table and a word of what.
type brokenCase struct {
	name, trigger, sql string
	seq                int64
	table, what        string
}

// testRefusesBroken runs each case on a fresh log of version from (write
// makes it, trigger spells one of its triggers as that version did,
// stillOld checks the file is still that version with n decisions rows):
// Upgrade refuses it, naming the break, and so does a writer's Open, and
// the file is left as it was, byte for byte.
func testRefusesBroken(t *testing.T, from int, cases []brokenCase, write func(testing.TB) string,
	trigger func(testing.TB, string) string, stillOld func(testing.TB, string, int64)) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := write(t)
			raw := rawDB(t, path)
			if c.trigger != "" {
				mustExec(t, raw, `DROP TRIGGER `+c.trigger)
			}
			mustExec(t, raw, c.sql)
			if c.trigger != "" {
				mustExec(t, raw, trigger(t, c.trigger))
			}
			var n int64
			if err := raw.QueryRow(`SELECT count(*) FROM decisions`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			raw.Close()
			before := fileSum(t, path)
			rep, err := sqlite.Upgrade(ctx, path, sqlite.Options{})
			var brk *sqlite.Break
			if !errors.As(err, &brk) || rep.Upgraded {
				t.Fatalf("upgraded an edited log: %+v %v", rep, err)
			}
			if brk.Seq != c.seq || brk.Table != c.table || !strings.Contains(brk.What, c.what) {
				t.Fatalf("named %q, want event %d in %s mentioning %q", brk.Error(), c.seq, c.table, c.what)
			}
			if !strings.Contains(err.Error(), "refusing to upgrade "+path) || !strings.Contains(err.Error(), fmt.Sprintf("left at version %d", from)) {
				t.Errorf("message: %v", err)
			}
			t.Logf("Upgrade says: %v", err)
			stillOld(t, path, n)
			if fileSum(t, path) != before {
				t.Error("a refused upgrade changed the file")
			}
			// A writer's Open, which upgrades, refuses it too.
			if l, err := sqlite.OpenOrCreate(path, sqlite.Options{}); !errors.As(err, &brk) {
				if l != nil {
					l.Close()
				}
				t.Fatalf("OpenOrCreate of an edited version %d log: %v", from, err)
			}
			stillOld(t, path, n)
		})
	}
}

func v1Trigger(t testing.TB, name string) string {
	for _, q := range v1fixture.Triggers {
		if strings.HasPrefix(q, "CREATE TRIGGER "+name+" ") {
			return q
		}
	}
	t.Fatalf("no version 1 trigger %s", name)
	return ""
}

// TestUpgradeIsIdempotent: a second Upgrade, or one of a new log, changes
// nothing (the file's bytes are the same) and reports the head.
func TestUpgradeIsIdempotent(t *testing.T) {
	h := writeV1(t)
	first, err := sqlite.Upgrade(ctx, h.path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, h.path)
	again, err := sqlite.Upgrade(ctx, h.path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := sqlite.UpgradeReport{Path: h.path, From: 3, To: 3, Events: 10, Decisions: 7, Approvals: 2, Uses: 1, HeadBefore: first.HeadAfter, HeadAfter: first.HeadAfter}
	if again != want {
		t.Fatalf("second upgrade\n got %+v\nwant %+v", again, want)
	}
	if fileSum(t, h.path) != before {
		t.Fatal("a second upgrade changed the file")
	}
	fresh := newLogPath(t)
	if rep, err := sqlite.Upgrade(ctx, fresh, sqlite.Options{}); err != nil || rep.Upgraded || rep.From != 3 || rep.HeadAfter != (audit.Head{}) {
		t.Fatalf("upgrade of a new log: %+v %v", rep, err)
	}
}

// TestUpgradeInterruptedLeavesV1: an upgrade failing at any stage, or
// whose context is cancelled mid-way, rolls back to the version 1 log,
// which then upgrades cleanly.
func TestUpgradeInterruptedLeavesV1(t *testing.T) {
	for _, stage := range []string{"copied", "dropped", "commit", "cancel"} {
		t.Run(stage, func(t *testing.T) {
			h := writeV1(t)
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			hit := false
			opt := sqlite.WithUpgradeFault(sqlite.Options{}, func(s string) error {
				if stage == "cancel" && s == "copied" {
					hit = true
					cancel() // the statements after this one fail
					return nil
				}
				if s == stage {
					hit = true
					return fmt.Errorf("injected failure at %s", s)
				}
				return nil
			})
			rep, err := sqlite.Upgrade(cctx, h.path, opt)
			if err == nil || rep.Upgraded || !hit {
				t.Fatalf("interrupted upgrade: %+v %v (stage reached: %v)", rep, err, hit)
			}
			if !strings.Contains(err.Error(), "nothing was changed") {
				t.Errorf("message: %v", err)
			}
			t.Logf("Upgrade says: %v", err)
			wantV1(t, h.path, 7)
			rep, err = sqlite.Upgrade(ctx, h.path, sqlite.Options{})
			if err != nil || !rep.Upgraded || rep.HeadAfter != h.head {
				t.Fatalf("upgrade after the failure: %+v %v", rep, err)
			}
		})
	}
	t.Run("cancelled before", func(t *testing.T) {
		h := writeV1(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := sqlite.Upgrade(cctx, h.path, sqlite.Options{}); err == nil {
			t.Fatal("upgrade with a cancelled context")
		}
		wantV1(t, h.path, 7)
	})
}

// crashMidUpgrade is the child of TestUpgradeCrashLeavesV1: it kills
// itself with SIGKILL in the middle of the upgrade's transaction, after
// the version 1 tables were dropped.
func crashMidUpgrade(path string) {
	opt := sqlite.WithUpgradeFault(sqlite.Options{}, func(stage string) error {
		if stage == "dropped" {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute)
		}
		return nil
	})
	_, err := sqlite.Upgrade(ctx, path, opt)
	fmt.Fprintln(os.Stderr, "upgrade was not killed:", err)
	os.Exit(1)
}

// TestUpgradeCrashLeavesV1: a process killed mid-upgrade leaves the
// version 1 log, intact, which a later upgrade converts.
func TestUpgradeCrashLeavesV1(t *testing.T) {
	h := writeV1(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "EWP_AUDIT_UPGRADE_CRASH="+h.path)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed: %v\n%s", err, out)
	}
	wantV1(t, h.path, 7)
	rep, err := sqlite.Upgrade(ctx, h.path, sqlite.Options{})
	if err != nil || !rep.Upgraded || rep.HeadAfter != h.head {
		t.Fatalf("upgrade after the crash: %+v %v", rep, err)
	}
}

// TestOpenUpgradesV1: a writer's Open or OpenOrCreate upgrades a version
// 1 log (ewp-mcp starts on an old log); a ReadOnly Open refuses it and
// names the command that upgrades it.
func TestOpenUpgradesV1(t *testing.T) {
	h := writeV1(t)
	ro, err := sqlite.Open(h.path, sqlite.Options{ReadOnly: true})
	if !errors.Is(err, sqlite.ErrSchemaVersion) || !strings.Contains(err.Error(), "ewp-audit upgrade --audit "+h.path) {
		if ro != nil {
			ro.Close()
		}
		t.Fatalf("read-only Open of a version 1 log: %v", err)
	}
	wantV1(t, h.path, 7)
	for _, open := range []func(string, sqlite.Options) (*sqlite.Log, error){sqlite.OpenOrCreate, sqlite.Open} {
		h := writeV1(t)
		l, err := open(h.path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep := mustVerify(t, l); rep.Head != h.head {
			t.Fatalf("head after open: %s, want %s", rep.Head, h.head)
		}
		record(t, l, pendingDecision("P-db", 20))
		if rep := mustVerify(t, l); rep.Events != 11 {
			t.Fatalf("events after a new Record: %d", rep.Events)
		}
		l.Close()
	}
}

func TestUpgradeRefusals(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.audit")
	if _, err := sqlite.Upgrade(ctx, missing, sqlite.Options{}); !errors.Is(err, sqlite.ErrLogNotFound) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("Upgrade created the file")
	}
	h := writeV1(t)
	if _, err := sqlite.Upgrade(ctx, h.path, sqlite.Options{ReadOnly: true}); err == nil {
		t.Fatal("a read-only upgrade")
	}
	raw := rawDB(t, h.path)
	mustExec(t, raw, `DROP TRIGGER audit_meta_no_UPDATE`)
	mustExec(t, raw, `UPDATE audit_meta SET value = '4' WHERE key = 'schema_version'`)
	raw.Close()
	if _, err := sqlite.Upgrade(ctx, h.path, sqlite.Options{}); !errors.Is(err, sqlite.ErrSchemaVersion) || !strings.Contains(err.Error(), "schema_version 4") {
		t.Fatalf("version 4: %v", err)
	}
	other := filepath.Join(dir, "other.db")
	raw = rawDB(t, other)
	mustExec(t, raw, `CREATE TABLE t (x)`)
	raw.Close()
	if _, err := sqlite.Upgrade(ctx, other, sqlite.Options{}); err == nil || !strings.Contains(err.Error(), "not a decision log") {
		t.Fatalf("another program's database: %v", err)
	}
}

// TestUpgradeBodyRowsAreCapped: a long run of consecutive decisions goes
// into decision_bodies rows of at most 256 bodies.
func TestUpgradeBodyRowsAreCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ewp.db.audit")
	l, err := v1fixture.Create(path, (&clock{t: t0}).now)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 600 {
		if err := l.Record(pendingDecision("P", i)); err != nil {
			t.Fatal(err)
		}
	}
	head, err := l.Head(ctx)
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := sqlite.Upgrade(ctx, path, sqlite.Options{})
	if err != nil || rep.BodyRows != 3 || rep.HeadAfter != head {
		t.Fatalf("upgrade: %+v %v", rep, err)
	}
	raw := rawDB(t, path)
	rows, err := raw.Query(`SELECT first_event, bodies FROM decision_bodies ORDER BY first_event`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var first int64
		var bodies []byte
		if err := rows.Scan(&first, &bodies); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%d", first, strings.Count(string(bodies), "\n")))
	}
	rows.Close()
	raw.Close()
	if strings.Join(got, " ") != "1:256 257:256 513:88" {
		t.Fatalf("decision_bodies rows (first event:bodies): %v", got)
	}
	ro, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	mustVerify(t, ro)
}

func sameDecision(t testing.TB, got, want *audit.Decision) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("decision reads back as\n%s\nwant\n%s", g, w)
	}
}

// newLogPath is a new, empty log's file.
func newLogPath(t testing.TB) string {
	l, _ := newLog(t)
	l.Close()
	return l.Path()
}

// schemaOf is the file's schema, every object with its SQL.
func schemaOf(t testing.TB, path string) string {
	t.Helper()
	raw := rawDB(t, path)
	defer raw.Close()
	rows, err := raw.Query(`SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var typ, name, tbl, def string
		if err := rows.Scan(&typ, &name, &tbl, &def); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s on %s: %s\n", typ, name, tbl, def)
	}
	return b.String()
}

func fileSum(t testing.TB, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestUpgradeEmptyV1: a version 1 log with nothing on record becomes an
// empty version 2 log, which then records.
func TestUpgradeEmptyV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ewp.db.audit")
	l, err := v1fixture.Create(path, (&clock{t: t0}).now)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	rep, err := sqlite.Upgrade(ctx, path, sqlite.Options{})
	if err != nil || !rep.Upgraded || rep.Events != 0 || rep.BodyRows != 0 || rep.HeadAfter != (audit.Head{}) {
		t.Fatalf("upgrade of an empty log: %+v %v", rep, err)
	}
	w, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	record(t, w, pendingDecision("P", 0))
	if rep := mustVerify(t, w); rep.Events != 1 {
		t.Fatalf("after a Record: %+v", rep)
	}
}
