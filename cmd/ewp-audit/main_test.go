package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/internal/pgtest"
)

// bin is ewp-audit built once for the package: the tests run the real
// binary, so exit statuses and streams are the ones an operator sees.
// home is the HOME it runs with (empty: no default operator key), keys
// the directory of the test operators' keys (opKey).
var bin, home, keys string

// opKey is the private key file of test operator name (written once).
func opKey(name string) string {
	path := filepath.Join(keys, name+".key")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := audittest.NewOperator(name).Signer.WriteFile(path); err != nil {
		panic(err)
	}
	return path
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ewp-audit-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin, home, keys = filepath.Join(dir, "ewp-audit"), filepath.Join(dir, "home"), filepath.Join(dir, "keys")
	for _, d := range []string{home, keys} {
		if err := os.Mkdir(d, 0o700); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := pgtest.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// cli runs ewp-audit and returns its exit status and streams.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func wantExit(t *testing.T, want int, args ...string) (string, string) {
	t.Helper()
	code, out, errs := cli(t, args...)
	if code != want {
		t.Fatalf("ewp-audit %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, want, out, errs)
	}
	return out, errs
}

// seeded is a ledger path whose decision log (at DefaultPath) holds
// decisions as ewp-mcp would record them; it returns the path and the
// recorded decisions, oldest first.
func seeded(t *testing.T, ds ...*audit.Decision) (string, []*audit.Decision) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "ewp.db")
	l, err := sqlite.Create(sqlite.DefaultPath(db), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, d := range ds {
		if err := l.Record(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	return db, ds
}

func decision(outcome audit.Outcome, prop string, i int) *audit.Decision {
	return &audit.Decision{
		Tool: audit.ToolMayAct, Outcome: outcome,
		Caller:        audit.Caller{ClientName: "claude-code", ClientVersion: "1.0", Transport: "stdio", Role: "evaluate", Credential: "agent"},
		PropositionID: prop, ViewID: "v1", ViewHash: strings.Repeat("9f", 32),
		ActionID: fmt.Sprintf("act-%d", i), ActionKind: "migrate", Risk: "high", Reversible: new(false),
		Concepts: []string{"database"}, ToolName: "psql", ArgumentsHash: strings.Repeat("ab", 32),
		PolicyIDs: []string{"prod-writes"}, GraphVersion: 2,
		Layers: []audit.Layer{{Layer: "policy", Decision: audit.Verdict(outcome), Reasons: []string{"prod-writes: irreversible in production"}}},
	}
}

func pending(prop string, i int) *audit.Decision {
	return decision(audit.OutcomeRequireConfirmation, prop, i)
}

func TestHelpTeaches(t *testing.T) {
	out, _ := wantExit(t, 0, "--help")
	for _, want := range []string{"EXAMPLES", "EXIT CODES", "--db LEDGER", "LEDGER.audit", "--pending", "verify", "export", "--json", "never the agent"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	for cmd, want := range map[string][]string{
		"approve": {"--once", "--scope-kind", "--until", "RFC 3339", "never lifts DENY", "EWP_REFUSE_APPROVAL_USED"},
		"reject":  {"--note", "Request changes"},
		"list":    {"--pending", "--after", "--limit"},
		"show":    {"approval trail", "APPROVAL_ID"},
		"verify":  {"--head SEQ:HASH", "cut off"},
		"export":  {"JSON Lines", "streams"},
	} {
		out, _ := wantExit(t, 0, cmd, "--help")
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s --help lacks %q", cmd, w)
			}
		}
	}
}

func TestUsageErrors(t *testing.T) {
	db, ds := seeded(t, pending("P-db", 1))
	id := ds[0].ID
	cases := []struct {
		args []string
		want string
	}{
		{[]string{}, "USAGE"},
		{[]string{"bless", id}, "unknown command"},
		{[]string{"upgrade", "--db", db}, "unknown command"},
		{[]string{"list"}, "--db LEDGER"},
		{[]string{"approve", "--db", db, id, "--once"}, "ewp-audit keygen"},
		{[]string{"approve", "--db", db, id, "--once", "--key", opKey("a"), "--approver", "b"}, "not the name of the operator key"},
		{[]string{"approve", "--db", db, id, "--key", opKey("a")}, "--once"},
		{[]string{"approve", "--db", db, id, "--key", opKey("a"), "--once", "--scope-kind", "k"}, "exclude"},
		{[]string{"approve", "--db", db, id, "--key", opKey("a"), "--scope"}, "--until"},
		{[]string{"approve", "--db", db, id, "--key", opKey("a"), "--once", "--until", "tomorrow"}, "RFC 3339"},
		{[]string{"approve", "--db", db, "--key", opKey("a"), "--once"}, "DECISION_ID"},
		{[]string{"reject", "--db", db, id, "--key", opKey("a")}, "--note"},
		{[]string{"list", "--db", db, "--outcome", "MAYBE"}, "--outcome"},
		{[]string{"list", "--db", db, "--since", "last week"}, "--since"},
		{[]string{"verify", "--db", db, "--head", "12"}, "SEQ:HASH"},
		{[]string{"show", "--db", db}, "exactly one"},
		{[]string{"list", "--db", db, "--bogus"}, "flag provided but not defined"},
	}
	for _, c := range cases {
		_, errs := wantExit(t, exitUsage, c.args...)
		if !strings.Contains(errs, c.want) {
			t.Errorf("%v: stderr %q lacks %q", c.args, errs, c.want)
		}
	}
}

func TestMissingLogIsNotCreated(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ewp.db")
	_, errs := wantExit(t, exitLog, "list", "--db", db)
	if !strings.Contains(errs, "ewp.db.audit does not exist") {
		t.Errorf("stderr: %s", errs)
	}
	if _, err := os.Stat(sqlite.DefaultPath(db)); err == nil {
		t.Fatal("list created a log")
	}
}

// TestOlderSchemaRefused: a log file of another schema version is refused
// by the commands that read it and by those that write it (exit 4), the
// message naming both versions; none converts it.
func TestOlderSchemaRefused(t *testing.T) {
	db, ds := seeded(t, pending("P-db", 1))
	raw, err := sql.Open("sqlite", sqlite.DefaultPath(db))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TRIGGER audit_meta_no_UPDATE`, `UPDATE audit_meta SET value = '2' WHERE key = 'schema_version'`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	for _, args := range [][]string{
		{"list", "--db", db},
		{"verify", "--db", db},
		{"approve", "--db", db, ds[0].ID, "--once", "--key", opKey("alice")},
	} {
		_, errs := wantExit(t, exitLog, args...)
		if !strings.Contains(errs, "schema_version 2") || !strings.Contains(errs, "only version 3") {
			t.Errorf("%v: stderr %q does not name both versions", args, errs)
		}
	}
}

// TestApproveOnceLoop: approve → the approval's id and action; a second
// answer is refused; show and list reflect it; a use appears in the trail.
func TestApproveOnceLoop(t *testing.T) {
	db, ds := seeded(t, pending("P-db", 1), pending("P-db", 2))
	id := ds[0].ID
	out, _ := wantExit(t, 0, "approve", id, "--db", db, "--once", "--key", opKey("alice"), "--note", "OPS-12", "--json")
	var a audit.Approval
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("approve --json: %v\n%s", err, out)
	}
	if a.ID == "" || a.DecisionID != id || !a.Once || a.Approver != "alice" || a.Action == nil || a.Action.ActionID != "act-1" {
		t.Fatalf("approval: %+v", a)
	}
	_, errs := wantExit(t, exitRefused, "reject", id, "--db", db, "--key", opKey("bob"), "--note", "no")
	if !strings.Contains(errs, "already answered") || !strings.Contains(errs, a.ID) {
		t.Errorf("second answer: %s", errs)
	}

	// The gate consumes it (as ewp-mcp does) and records the call.
	l, err := sqlite.Open(sqlite.DefaultPath(db), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	use := decision(audit.OutcomeMayAct, "P-db", 1)
	use.ID, use.ApprovalID = audit.NewID(), a.ID
	if err := l.RecordUse(context.Background(), use); err != nil {
		t.Fatal(err)
	}
	l.Close()

	out, _ = wantExit(t, 0, "show", "--db", db, id)
	for _, want := range []string{"decision " + id, "claude-code 1.0, via stdio", "REQUIRE_CONFIRMATION", "prod-writes: irreversible",
		"answered by", a.ID, "approved, once by alice", "note: OPS-12", "used by decision " + use.ID, "presented by " + use.ID + " → MAY_ACT"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	// By the approval's id, and as JSON.
	out, _ = wantExit(t, 0, "show", "--db", db, a.ID, "--json")
	var tr trail
	if err := json.Unmarshal([]byte(out), &tr); err != nil || tr.Decision.ID != id || len(tr.Answers) != 1 || tr.Answers[0].Use == nil || tr.Answers[0].Use.UsedBy != use.ID {
		t.Fatalf("show --json: %v\n%s", err, out)
	}
	out, _ = wantExit(t, 0, "show", "--db", db, use.ID)
	if !strings.Contains(out, "presented approval") || !strings.Contains(out, a.ID) {
		t.Errorf("show of the using call lacks its approval:\n%s", out)
	}

	out, _ = wantExit(t, 0, "list", "--db", db, "--pending", "--json")
	var page struct {
		Decisions []listRow `json:"decisions"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Decisions) != 1 || page.Decisions[0].ID != ds[1].ID || page.Decisions[0].Answer != "pending" {
		t.Fatalf("list --pending: %v\n%s", err, out)
	}
	out, _ = wantExit(t, 0, "list", "--db", db, "--proposition", "P-none", "--json")
	if !strings.Contains(out, `"decisions": []`) {
		t.Errorf("an empty page in --json is not an empty list:\n%s", out)
	}
	out, _ = wantExit(t, 0, "show", "--db", db, ds[1].ID)
	if !strings.Contains(out, "ewp-audit approve --db "+db+" "+ds[1].ID+" --once") {
		t.Errorf("show of a pending decision does not say how to answer it:\n%s", out)
	}
	_, errs = wantExit(t, exitNotFound, "show", "--db", db, "nope")
	if !strings.Contains(errs, "neither a decision nor an approval") {
		t.Errorf("show unknown: %s", errs)
	}
}

func TestApproveRefusals(t *testing.T) {
	db, ds := seeded(t, decision(audit.OutcomeMayAct, "P-db", 1), decision(audit.OutcomeDeny, "P-db", 2), pending("P-db", 3))
	_, errs := wantExit(t, exitNotFound, "approve", "--db", db, "0192-unknown", "--once", "--key", opKey("a"))
	if !strings.Contains(errs, "no decision 0192-unknown") {
		t.Errorf("unknown: %s", errs)
	}
	for _, d := range ds[:2] {
		_, errs := wantExit(t, exitRefused, "approve", "--db", db, d.ID, "--once", "--key", opKey("a"))
		if !strings.Contains(errs, "only a REQUIRE_CONFIRMATION decision") {
			t.Errorf("%s: %s", d.Outcome, errs)
		}
	}
	_, errs = wantExit(t, exitRefused, "approve", "--db", db, ds[2].ID, "--scope-tool", "sh", "--until", "1h", "--key", opKey("a"))
	if !strings.Contains(errs, "must cover the decision") {
		t.Errorf("scope not covering its decision: %s", errs)
	}
}

func TestApproveScopeAndReject(t *testing.T) {
	db, ds := seeded(t, pending("P-db", 1), pending("P-db", 2))
	before := time.Now()
	out, _ := wantExit(t, 0, "approve", "--audit", sqlite.DefaultPath(db), ds[0].ID, "--scope-kind", "migrate", "--scope-concepts", "database, schema", "--until", "2h", "--key", opKey("alice"), "--json")
	var a audit.Approval
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if a.Once || a.Scope == nil || a.Scope.PropositionID != "P-db" || a.Scope.ActionKind != "migrate" ||
		strings.Join(a.Scope.Concepts, "|") != "database|schema" || a.Until.Before(before.Add(2*time.Hour)) || a.Until.After(time.Now().Add(2*time.Hour)) {
		t.Fatalf("scope approval: %+v", a)
	}
	out, _ = wantExit(t, 0, "reject", "--db", db, ds[1].ID, "--key", opKey("bob"), "--note", "run it on the replica first")
	for _, want := range []string{"rejected decision " + ds[1].ID, "approval_id", "note         run it on the replica first"} {
		if !strings.Contains(out, want) {
			t.Errorf("reject output lacks %q:\n%s", want, out)
		}
	}
	out, _ = wantExit(t, 0, "list", "--db", db, "--outcome", "require_confirmation")
	if !strings.Contains(out, "approved by "+a.ID) || !strings.Contains(out, "rejected by") {
		t.Errorf("list shows no answers:\n%s", out)
	}
}

func TestListPages(t *testing.T) {
	var ds []*audit.Decision
	for i := range 7 {
		prop := "P-a"
		if i%2 == 1 {
			prop = "P-b"
		}
		ds = append(ds, pending(prop, i))
	}
	db, ds := seeded(t, ds...)
	type page struct {
		Decisions []listRow `json:"decisions"`
		NextAfter string    `json:"next_after"`
	}
	get := func(args ...string) page {
		out, _ := wantExit(t, 0, append([]string{"list", "--db", db, "--json"}, args...)...)
		var p page
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := get("--limit", "3")
	if len(p.Decisions) != 3 || p.Decisions[0].ID != ds[6].ID || p.NextAfter != ds[4].ID {
		t.Fatalf("newest page: %+v", p)
	}
	p = get("--limit", "3", "--after", p.NextAfter)
	if len(p.Decisions) != 3 || p.Decisions[0].ID != ds[3].ID {
		t.Fatalf("second page: %+v", p)
	}
	p = get("--oldest-first", "--proposition", "P-b")
	if len(p.Decisions) != 3 || p.Decisions[0].ID != ds[1].ID || p.NextAfter != "" {
		t.Fatalf("P-b oldest first: %+v", p)
	}
	p = get("--since", "1h", "--until", "0s")
	if len(p.Decisions) != 7 {
		t.Fatalf("last hour: %d", len(p.Decisions))
	}
	p = get("--until", "1h")
	if len(p.Decisions) != 0 {
		t.Fatalf("before an hour ago: %d", len(p.Decisions))
	}
	out, _ := wantExit(t, 0, "list", "--db", db, "--limit", "2")
	if !strings.Contains(out, "(more: --after "+ds[5].ID+")") || !strings.Contains(out, ds[6].ID) {
		t.Errorf("text page:\n%s", out)
	}
}

func TestExportStreamsJSONLines(t *testing.T) {
	var ds []*audit.Decision
	for i := range 250 {
		ds = append(ds, pending("P-db", i))
	}
	ds = append(ds, decision(audit.OutcomeDeny, "P-x", 999))
	db, ds := seeded(t, ds...)
	out, errs := wantExit(t, 0, "export", "--db", db)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(ds) || !strings.Contains(errs, "251 decisions") {
		t.Fatalf("%d lines, stderr %q", len(lines), errs)
	}
	for i, line := range lines {
		var d audit.Decision
		if err := json.Unmarshal([]byte(line), &d); err != nil || d.ID != ds[i].ID {
			t.Fatalf("line %d: %v %q", i, err, line)
		}
	}
	out, _ = wantExit(t, 0, "export", "--db", db, "--outcome", "DENY")
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, ds[250].ID) {
		t.Fatalf("DENY export: %s", out)
	}
}

func TestVerify(t *testing.T) {
	db, ds := seeded(t, pending("P-db", 1), pending("P-db", 2))
	out, _ := wantExit(t, 0, "verify", "--db", db, "--json")
	var rep struct {
		OK   bool       `json:"ok"`
		Head audit.Head `json:"head"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.OK || rep.Head.Seq != 2 {
		t.Fatalf("verify --json: %v %s", err, out)
	}
	head := rep.Head.String()
	wantExit(t, 0, "approve", "--db", db, ds[0].ID, "--once", "--key", opKey("a"))
	out, _ = wantExit(t, 0, "verify", "--db", db, "--head", head)
	if !strings.Contains(out, "ok: checked 3 events (2 decisions, 1 approval, 0 approval uses)") || !strings.Contains(out, "still holds head "+head) {
		t.Errorf("verify: %s", out)
	}
	// Edit a decision behind the triggers' back.
	raw := rawDB(t, sqlite.DefaultPath(db))
	for _, q := range []string{`DROP TRIGGER decisions_no_UPDATE`, `UPDATE decisions SET outcome = 'MAY_ACT' WHERE seq = 2`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	out, errs := wantExit(t, exitBroken, "verify", "--db", db)
	if !strings.HasPrefix(out, "BROKEN") || !strings.Contains(errs, "event 2") || !strings.Contains(errs, "outcome") {
		t.Errorf("broken: %s / %s", out, errs)
	}
}
