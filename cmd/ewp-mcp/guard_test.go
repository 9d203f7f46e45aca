package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/ledger/sqlite"
)

// TestMain lets a test run this package's main() as a real process (the
// test binary re-executed with EWP_MCP_RUN_MAIN=1), so exit statuses are
// the ones an operator sees.
func TestMain(m *testing.M) {
	if os.Getenv("EWP_MCP_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(pgtest.Run(m))
}

// process runs ewp-mcp with args and stdin; it returns the exit status and
// both streams.
func process(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "EWP_MCP_RUN_MAIN=1")
	cmd.Stdin = strings.NewReader(stdin)
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

// graphLedger is a ledger file holding the demo concept graph.
func graphLedger(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ewp.sqlite")
	l, err := sqlite.Create(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := graphstore.LoadDocument(context.Background(), l, fixtures.DemoGraph); err != nil {
		t.Fatal(err)
	}
	return path
}

func writePolicies(t testing.TB, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policies.cedar")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A placement with no edge in the graph stops the server before it
// serves anything; every orphan is listed with its reason.
func TestOrphanPlacementsRefuseToStart(t *testing.T) {
	policies := writePolicies(t, `
@id("typo_source") @source("delet") @target("file") @source_depth("3")
forbid (principal, action, resource);

@id("typo_target") @source("delete") @target("files") @source_depth("3")
forbid (principal, action, resource);

@id("wrong_depth") @source("delete") @target("file") @source_depth("2")
forbid (principal, action, resource);

@id("fine") @source("delete") @target("file") @source_depth("3")
forbid (principal, action, resource);
`)
	code, stdout, stderr := process(t, "", "--db", graphLedger(t), "--policies", policies)
	if code == 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q: the server must not start", code, stdout)
	}
	for _, want := range []string{
		"3 edge-policy placement(s) have no APPLIES_TO edge",
		"(typo_source): delet->file @ D3 CONSTRAINTS [source primitive not found]",
		"(typo_target): delete->files @ D3 CONSTRAINTS [target primitive not found]",
		"(wrong_depth): delete->file @ D2 CAPABILITIES [no APPLIES_TO edge at this source depth]",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "(fine)") || strings.Contains(stderr, "serving MCP") {
		t.Errorf("a valid placement was listed, or the server started:\n%s", stderr)
	}
}

func TestBadPolicyFilesRefuseToStart(t *testing.T) {
	db := graphLedger(t)
	for name, tc := range map[string]struct{ src, want string }{
		"permit":         {`@id("p") @source("delete") @target("file") @source_depth("3") permit (principal, action, resource);`, "forbid"},
		"syntax":         {`forbid (principal, action`, "not valid"},
		"no annotations": {`forbid (principal, action, resource);`, "@id"},
	} {
		code, _, stderr := process(t, "", "--db", db, "--policies", writePolicies(t, tc.src))
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr lacks %q:\n%s", name, code, tc.want, stderr)
		}
	}
	if code, _, stderr := process(t, "", "--db", db, "--policies", "/nonexistent.cedar"); code == 0 || !strings.Contains(stderr, "--policies") {
		t.Errorf("missing file: exit %d %s", code, stderr)
	}
}

func TestPoliciesNeedAGraphStore(t *testing.T) {
	r := runWith(t, []string{"--db", ledgerFile(t), "--policies", writePolicies(t, "")}, env(), "")
	if r.code != 1 || !strings.Contains(r.stderr, "--policies needs a ledger that holds a concept graph") {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
}

// session runs ewp-mcp as a process on stdio: it initializes, sends each
// call as tools/call and returns the structured results in order. Stdin
// stays open until every reply is in: the stdio server cancels in-flight
// calls when its client goes away.
func session(t *testing.T, args []string, calls ...string) []map[string]any {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "EWP_MCP_RUN_MAIN=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, c := range calls {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`+"\n", i+1, c)
	}
	out := make([]map[string]any, len(calls))
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for got := 0; got < len(calls) && sc.Scan(); {
		var m struct {
			ID     int `json:"id"`
			Result struct {
				Structured map[string]any `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON-RPC: %q", sc.Text())
		}
		if m.ID > 0 {
			out[m.ID-1], got = m.Result.Structured, got+1
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ewp-mcp %v: %v\n%s", args, err, errb.String())
	}
	return out
}

// The README's one-command demo shows the guard: the demo graph is served
// and the demo policies judge a delete.
func TestDemoServesTheGuard(t *testing.T) {
	r := session(t, []string{"--demo"},
		`{"name":"check_grounding","arguments":{"concepts":["delete","file"]}}`,
		deleteCall("protected/report.txt"), deleteCall("/etc/hosts"), deleteCall("/tmp/notes.txt"))
	if r[0]["grounded"] != true || r[1]["decision"] != "REQUIRE_CONFIRMATION" || r[2]["decision"] != "DENY" || r[3]["decision"] != "MAY_ACT" {
		t.Fatalf("check %v; protected %v; /etc %v; /tmp %v", r[0]["grounded"], r[1]["decision"], r[2]["decision"], r[3]["decision"])
	}
}

func deleteCall(path string) string {
	return `{"name":"may_act","arguments":{"action":{"action_id":"a","kind":"delete","risk":"high","reversible":false,` +
		`"concepts":["delete","file"],"tool_name":"rm","arguments":{"path":"` + path + `"},"cardinality":"single"}}}`
}

// A valid policy file on a ledger with the graph starts and guards.
func TestPoliciesLoadedAtStart(t *testing.T) {
	policies := writePolicies(t, string(fixtures.DemoPolicies))
	r := session(t, []string{"--db", graphLedger(t), "--policies", policies}, deleteCall("/etc/hosts"), deleteCall("/tmp/x"))
	if r[0]["decision"] != "DENY" || r[1]["decision"] != "MAY_ACT" {
		t.Fatalf("%v / %v", r[0], r[1])
	}
}
