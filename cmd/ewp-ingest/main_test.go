package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ingest"
)

// runCLI runs the command in-process.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func view(prop, viewID, origin string) string {
	return `{"proposition_id": "` + prop + `", "view_id": "` + viewID + `", "evidence": [{"evidence_id": "e1", "polarity": "supports",
 "content": "c", "observed_at": "2026-09-01T00:00:00Z", "source": {"source_id": "s1", "lineage_id": "L1", "origin_type": "` + origin + `",
 "origin_locator": "x", "snapshot_id": "s1", "content_hash": "h", "observed_at": "2026-09-01T00:00:00Z"}}]}`
}

func TestHelpTeaches(t *testing.T) {
	code, out, _ := runCLI(t, "", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--attest-trusted-origins", "--partial", "EXAMPLES", "EXIT CODES", "verify --db", "JSON Lines"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// verify --help is verify's own help, naming --head; the main help names
// --strict and init for a file.
func TestSubcommandHelp(t *testing.T) {
	code, out, _ := runCLI(t, "", "verify", "--help")
	if code != 0 || !strings.Contains(out, "--head SEQ:HASH") || strings.Contains(out, "--attest-trusted-origins") {
		t.Fatalf("verify --help: exit %d\n%s", code, out)
	}
	_, out, _ = runCLI(t, "", "--help")
	for _, want := range []string{"--strict", "init --db PATH|postgres://", "ewp.sqlite"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	if strings.Contains(out, "ewp.db") {
		t.Error("--help still names ewp.db; the examples' ledger is ewp.sqlite")
	}
}

// SQLite only: usage errors come before any store is opened, and the
// check that none created a ledger looks for the file.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ewp.db")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"x.json"}, "--db PATH is required"},
		{[]string{"--db", db}, "no input"},
		{[]string{"--db", db, "--bogus", "x"}, "flag provided but not defined"},
		{[]string{"--db", db, filepath.Join(dir, "missing.json")}, "cannot read input"},
		{[]string{"--db", db, "--evaluated-at", "yesterday", "-"}, "not a parseable instant"},
		{[]string{"--db", db, "-", "-"}, "only once"},
	}
	for _, c := range cases {
		code, _, errs := runCLI(t, "", c.args...)
		if code != ingest.ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, ingest.ExitUsage, c.want)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a usage error created the ledger")
	}
}

func TestLoadFormatsAndReport(t *testing.T) { eachStore(t, testLoadFormatsAndReport) }

func testLoadFormatsAndReport(t *testing.T, kind string) {
	dir := t.TempDir()
	db := freshDB(t, kind)
	list := writeFile(t, dir, "list.json", "["+view("P-a", "v1", "extract")+", "+view("P-b", "v1", "extract")+"]")
	jsonl := writeFile(t, dir, "v.jsonl", strings.ReplaceAll(view("P-c", "v1", "extract"), "\n", "")+"\n"+strings.ReplaceAll(view("P-d", "v1", "extract"), "\n", "")+"\n")
	code, out, errs := runCLI(t, "", "--db", db, "--evaluated-at", "2026-09-21T12:00:00Z", list, jsonl)
	if code != ingest.ExitOK {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	for _, want := range []string{"list.json: list, 2 views: 2 stored", "v.jsonl: jsonl, 2 views: 2 stored",
		"summary: 4 stored, 0 unchanged, 0 refused; 4 propositions touched", "warrant at 2026-09-21T12:00:00Z",
		"P-a  view v1  acceptance=TENTATIVE conflict=NONE verification=NONE currency=CURRENT sufficiency=SUFFICIENT"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, view("P-e", "v1", "extract"), "--db", db, "--axes", "1", list, "-")
	if code != 0 || !strings.Contains(out, "0 stored, 2 unchanged") || !strings.Contains(out, "<stdin>: view, 1 view: 1 stored") || !strings.Contains(out, "... and 2 more") {
		t.Fatalf("re-load: exit %d\n%s", code, out)
	}
}

func TestRefusalsNameFileLineFieldRule(t *testing.T) { eachStore(t, testRefusalsNameFileLineFieldRule) }

func testRefusalsNameFileLineFieldRule(t *testing.T, kind string) {
	dir := t.TempDir()
	db := freshDB(t, kind)
	bad := strings.ReplaceAll(view("P-x", "v2", "extract"), `"supports"`, `"maybe"`)
	lines := strings.ReplaceAll(view("P-ok", "v1", "extract"), "\n", "") + "\n" + strings.ReplaceAll(bad, "\n", "") + "\n"
	f := writeFile(t, dir, "mixed.jsonl", lines)
	code, _, errs := runCLI(t, "", "--db", db, f)
	if code != ingest.ExitRefused {
		t.Fatalf("exit %d, want %d", code, ingest.ExitRefused)
	}
	if !strings.Contains(errs, "mixed.jsonl: line 2: EWP_REFUSE_INVALID_EVIDENCE_VIEW: evidence[0].polarity") {
		t.Fatalf("stderr does not locate the refusal: %s", errs)
	}
	code, out, _ := runCLI(t, "", "--db", db, "--json", f)
	var rep ingest.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ingest.ExitRefused || rep.Stored != 0 || rep.Refused != 1 {
		t.Fatalf("json report: exit %d, %v, %s", code, err, out)
	}
	code, out, _ = runCLI(t, "", "--db", db, "--partial", f)
	if code != ingest.ExitPartial || !strings.Contains(out, "1 stored, 0 unchanged, 1 refused (--partial)") {
		t.Fatalf("--partial: exit %d\n%s", code, out)
	}
}

func TestTrustedOriginsNeedAttestation(t *testing.T) { eachStore(t, testTrustedOriginsNeedAttestation) }

func testTrustedOriginsNeedAttestation(t *testing.T, kind string) {
	dir := t.TempDir()
	db := freshDB(t, kind)
	f := writeFile(t, dir, "tool.json", view("P-t", "v1", "tool"))
	code, _, errs := runCLI(t, "", "--db", db, f)
	if code != ingest.ExitRefused || !strings.Contains(errs, "EWP_REFUSE_UNATTESTED_TRUSTED_ORIGIN: evidence[0].source.origin_type") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, "", "--db", db, "--attest-trusted-origins", "--quiet", f); code != 0 || errs != "" {
		t.Fatalf("attested: exit %d: %s", code, errs)
	}
}

func TestImmutableSnapshotRefused(t *testing.T) { eachStore(t, testImmutableSnapshotRefused) }

func testImmutableSnapshotRefused(t *testing.T, kind string) {
	db := freshDB(t, kind)
	runCLI(t, view("P-i", "v1", "extract"), "--db", db, "-")
	changed := strings.Replace(view("P-i", "v1", "extract"), `"content": "c"`, `"content": "other"`, 1)
	code, _, errs := runCLI(t, changed, "--db", db, "-")
	if code != ingest.ExitRefused || !strings.Contains(errs, "EWP_REFUSE_IMMUTABLE_RECORD") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func TestVerifyCommand(t *testing.T) { eachStore(t, testVerifyCommand) }

func testVerifyCommand(t *testing.T, kind string) {
	db := freshDB(t, kind)
	// A missing file is not found; an empty PostgreSQL database (or
	// schema) is not a ledger, and init is named. Twice: had the first
	// verify created an empty ledger, the second would find it.
	missing := map[string]string{"sqlite": "ledger not found", "postgres": "is not an EWP ledger (no ledger_meta table); create it with `ewp-ingest init --db URL`"}[kind]
	for range 2 {
		if code, _, errs := runCLI(t, "", "verify", "--db", db); code != ingest.ExitLedger || !strings.Contains(errs, missing) {
			t.Fatalf("missing ledger: exit %d %s", code, errs)
		}
	}
	runCLI(t, view("P-v", "v1", "extract"), "--db", db, "-")
	code, out, _ := runCLI(t, "", "verify", "--db", db)
	if code != 0 || !strings.Contains(out, "ok: checked 1 event (1 snapshot,") {
		t.Fatalf("verify: exit %d %s", code, out)
	}
	if code, _, _ := runCLI(t, "", "verify"); code != ingest.ExitUsage {
		t.Fatalf("verify without --db: exit %d", code)
	}
}
