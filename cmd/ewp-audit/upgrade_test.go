package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/audit/sqlite/v1fixture"
)

// seededV1 is a ledger path whose decision log is a version 1 file, as
// the releases before schema 2 wrote it. Events: 1, 2 two pending
// decisions, 3 a once approval of the first, 4 its use, 5 the call that
// used it. It returns the path, the decisions and the head.
func seededV1(t *testing.T) (string, []*audit.Decision, audit.Head) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "ewp.db")
	l, err := v1fixture.Create(sqlite.DefaultPath(db), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ds := []*audit.Decision{pending("P-db", 1), pending("P-db", 2), decision(audit.OutcomeMayAct, "P-db", 1)}
	a := &audit.Approval{Verdict: audit.Approved, Approver: "alice", Once: true}
	ds[2].ID = audit.NewID()
	for _, step := range []func() error{
		func() error { return l.Record(ds[0]) },
		func() error { return l.Record(ds[1]) },
		func() error { a.DecisionID = ds[0].ID; return l.Approve(a) },
		func() error { return l.Consume(a.ID, ds[2].ID) },
		func() error { ds[2].ApprovalID = a.ID; return l.Record(ds[2]) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	head, err := l.Head(t.Context())
	if err != nil || head.Seq != 5 {
		t.Fatalf("version 1 head: %v %v", head, err)
	}
	return db, ds, head
}

// TestUpgrade: the reading commands refuse a version 1 log and name
// upgrade; upgrade converts it with its head unchanged (verify --head
// with the old head passes); a second upgrade has nothing to do.
func TestUpgrade(t *testing.T) {
	db, ds, head := seededV1(t)
	path := sqlite.DefaultPath(db)
	for _, cmd := range []string{"list", "verify", "export"} {
		_, errs := wantExit(t, exitLog, cmd, "--db", db)
		if !strings.Contains(errs, "schema_version 1") || !strings.Contains(errs, "ewp-audit upgrade --audit "+path) {
			t.Errorf("%s on a version 1 log: %s", cmd, errs)
		}
	}
	out, _ := wantExit(t, exitOK, "upgrade", "--db", db)
	for _, want := range []string{"upgraded " + path + " from schema version 1 to 3", "5 events (3 decisions, their bodies in 2 rows; 1 approval, 1 approval use)", "head " + head.String() + " (unchanged)"} {
		if !strings.Contains(out, want) {
			t.Errorf("upgrade output lacks %q:\n%s", want, out)
		}
	}
	out, _ = wantExit(t, exitOK, "verify", "--db", db, "--head", head.String())
	if !strings.Contains(out, "ok: checked 5 events (3 decisions, 1 approval, 1 approval use)") || !strings.Contains(out, "still holds head "+head.String()) {
		t.Errorf("verify after upgrade: %s", out)
	}
	out, _ = wantExit(t, exitOK, "list", "--db", db, "--pending")
	if !strings.Contains(out, ds[1].ID) || strings.Contains(out, ds[0].ID) {
		t.Errorf("list --pending after upgrade:\n%s", out)
	}
	out, _ = wantExit(t, exitOK, "show", "--db", db, ds[0].ID)
	if !strings.Contains(out, "approved, once by alice") || !strings.Contains(out, "used by decision "+ds[2].ID) {
		t.Errorf("show after upgrade:\n%s", out)
	}

	out, _ = wantExit(t, exitOK, "upgrade", "--audit", path)
	if !strings.Contains(out, path+" is already schema version 3: nothing to do") || !strings.Contains(out, "head "+head.String()) {
		t.Errorf("second upgrade:\n%s", out)
	}
	out, _ = wantExit(t, exitOK, "upgrade", "--audit", path, "--json")
	var rep sqlite.UpgradeReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Upgraded || rep.From != 3 || rep.To != 3 || rep.HeadAfter != head || rep.Decisions != 3 {
		t.Fatalf("upgrade --json: %v\n%s", err, out)
	}
}

// TestUpgradeJSON: --json prints the report of the conversion.
func TestUpgradeJSON(t *testing.T) {
	db, _, head := seededV1(t)
	out, _ := wantExit(t, exitOK, "upgrade", "--db", db, "--json")
	var rep sqlite.UpgradeReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	want := sqlite.UpgradeReport{Path: sqlite.DefaultPath(db), From: 1, To: 3, Upgraded: true, Events: 5, Decisions: 3, Approvals: 1, Uses: 1,
		BodyRows: 2, HeadBefore: head, HeadAfter: head}
	if rep != want {
		t.Fatalf("upgrade --json\n got %+v\nwant %+v", rep, want)
	}
}

// TestUpgradeRefusesBrokenLog: an edited version 1 log is not converted
// (exit 5, the break named) and stays version 1.
func TestUpgradeRefusesBrokenLog(t *testing.T) {
	db, _, _ := seededV1(t)
	raw := rawDB(t, sqlite.DefaultPath(db))
	for _, q := range []string{`DROP TRIGGER decisions_no_UPDATE`, `UPDATE decisions SET outcome = 'MAY_ACT' WHERE seq = 2`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	_, errs := wantExit(t, exitBroken, "upgrade", "--db", db)
	for _, want := range []string{"refusing to upgrade", "event 2", "outcome", "left at version 1"} {
		if !strings.Contains(errs, want) {
			t.Errorf("upgrade of an edited log: stderr lacks %q: %s", want, errs)
		}
	}
	if v, n, err := v1fixture.Version(sqlite.DefaultPath(db)); err != nil || v != "1" || n != 3 {
		t.Fatalf("after a refused upgrade: version %q, %d decisions, %v", v, n, err)
	}
}

// TestApproveUpgradesV1: a writing command opens a version 1 log as
// ewp-mcp does, upgrading it first.
func TestApproveUpgradesV1(t *testing.T) {
	db, ds, head := seededV1(t)
	out, _ := wantExit(t, exitOK, "approve", "--db", db, ds[1].ID, "--once", "--key", opKey("bob"))
	if !strings.Contains(out, "approved decision "+ds[1].ID) {
		t.Errorf("approve on a version 1 log:\n%s", out)
	}
	out, _ = wantExit(t, exitOK, "verify", "--db", db, "--head", head.String())
	if !strings.Contains(out, "ok: checked 6 events") {
		t.Errorf("verify: %s", out)
	}
}

func TestUpgradeUsage(t *testing.T) {
	_, errs := wantExit(t, exitUsage, "upgrade")
	if !strings.Contains(errs, "--db LEDGER") {
		t.Errorf("upgrade without a log: %s", errs)
	}
	db := filepath.Join(t.TempDir(), "ewp.db")
	_, errs = wantExit(t, exitUsage, "upgrade", "--db", db, "extra")
	if !strings.Contains(errs, "unexpected argument") {
		t.Errorf("upgrade with an argument: %s", errs)
	}
	_, errs = wantExit(t, exitLog, "upgrade", "--db", db)
	if !strings.Contains(errs, "ewp.db.audit does not exist") {
		t.Errorf("upgrade of a missing log: %s", errs)
	}
	if _, err := os.Stat(sqlite.DefaultPath(db)); err == nil {
		t.Fatal("upgrade created a log")
	}
}
