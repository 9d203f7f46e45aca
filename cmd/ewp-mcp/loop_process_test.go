package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/internal/syncbuf"
)

// buildAudit builds the ewp-audit command into a temporary directory.
func buildAudit(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ewp-audit")
	if out, err := exec.Command("go", "build", "-o", bin, "../ewp-audit").CombinedOutput(); err != nil {
		t.Fatalf("building ewp-audit: %v\n%s", err, out)
	}
	return bin
}

// demoLedgerFile is a real ledger file holding the example evidence and
// the demo concept graph (what --demo serves, but on disk, so the decision
// log is the SQLite store beside it and ewp-audit --db finds it).
func demoLedgerFile(t testing.TB) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "ewp.sqlite")
	if err := fillDemo(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

// mcpProcess is ewp-mcp running as its own process (the test binary
// re-executed as main, see TestMain), spoken to over stdio or HTTP.
type mcpProcess struct {
	t    testing.TB
	cmd  *exec.Cmd
	errb *syncbuf.Buffer
	url  string         // HTTP
	in   io.WriteCloser // stdio
	out  *bufio.Scanner // stdio
	n    int
}

// startMCP starts ewp-mcp with args; with --http in args it is spoken to
// over HTTP, otherwise over stdio (after initialize).
func startMCP(t testing.TB, args ...string) *mcpProcess {
	t.Helper()
	p := &mcpProcess{t: t, errb: &syncbuf.Buffer{}}
	p.cmd = exec.Command(os.Args[0], args...)
	p.cmd.Env = append(os.Environ(), "EWP_MCP_RUN_MAIN=1")
	p.cmd.Stderr = p.errb
	overHTTP := strings.Contains(strings.Join(args, " "), "--http")
	if !overHTTP {
		p.in, _ = p.cmd.StdinPipe()
		stdout, _ := p.cmd.StdoutPipe()
		p.out = bufio.NewScanner(stdout)
		p.out.Buffer(nil, 1<<20)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.in != nil {
			p.in.Close()
		}
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
	if overHTTP {
		p.url = waitForURL(t, p.errb)
		return p
	}
	fmt.Fprintln(p.in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1"}}}`)
	if !p.out.Scan() {
		t.Fatalf("no initialize reply: %s", p.errb.String())
	}
	fmt.Fprintln(p.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

// call sends one tools/call and returns its reply.
func (p *mcpProcess) call(tool string, args map[string]any) toolReply {
	p.t.Helper()
	p.n++
	body := callBody(p.n, tool, args)
	if p.url != "" {
		b, err := post(p.url, body)
		if err != nil {
			p.t.Fatal(err)
		}
		_, r := decodeReply(p.t, b)
		return r
	}
	fmt.Fprintln(p.in, body)
	for p.out.Scan() {
		if id, r := decodeReply(p.t, p.out.Bytes()); id == p.n {
			return r
		}
	}
	p.t.Fatalf("no reply to call %d: %s", p.n, p.errb.String())
	return toolReply{}
}

// post sends one JSON-RPC message over HTTP and returns the reply, which
// it checks is JSON (so it is safe to use from any goroutine).
func post(url, body string) ([]byte, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && !json.Valid(b) {
		err = fmt.Errorf("HTTP %d, not JSON: %q", resp.StatusCode, b)
	}
	return b, err
}

// operator runs ewp-audit on the same ledger, as the operator does at a
// shell, and returns its stdout; it fails the test on a non-zero exit.
func operator(t *testing.T, bin, db string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append(args, "--db", db)...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ewp-audit %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return string(out)
}

// approvalID is the approval_id ewp-audit approve --json printed.
func approvalID(t *testing.T, out string) string {
	t.Helper()
	var ap struct {
		ID string `json:"approval_id"`
	}
	if err := json.Unmarshal([]byte(out), &ap); err != nil || ap.ID == "" {
		t.Fatalf("ewp-audit approve --json: %q", out)
	}
	return ap.ID
}

// approvalLayerOf is the approval layer of a may_act answer and its first
// reason.
func approvalLayerOf(out map[string]any) (layer map[string]any, reason string) {
	layers, _ := out["layers"].([]any)
	for _, l := range layers {
		if lo := l.(map[string]any); lo["layer"] == "approval" {
			if rs, _ := lo["reasons"].([]any); len(rs) > 0 {
				reason, _ = rs[0].(string)
			}
			return lo, reason
		}
	}
	return nil, ""
}

// deleteOn is a delete of path with tool, about proposition pid when not
// empty; the demo policies answer a protected path with
// REQUIRE_CONFIRMATION and a path under /etc with DENY.
func deleteOn(pid, tool, path string) map[string]any {
	act := map[string]any{"action_id": "a", "kind": "delete", "risk": "high", "reversible": false,
		"concepts": []any{"delete", "file"}, "tool_name": tool, "arguments": map[string]any{"path": path}, "cardinality": "single"}
	args := map[string]any{"action": act}
	if pid != "" {
		args["proposition_id"] = pid
	}
	return args
}

// The loop of issue #12 across real processes, over stdio and over HTTP:
// ewp-mcp on a ledger with its SQLite decision log, every approval given
// by the ewp-audit command on the same --db. REQUIRE_CONFIRMATION with a
// decision_id → approve --once → MAY_ACT with the approval layer naming
// the approver → the same approval again refused as used; and a
// rejection, an expired approval, a wrong action, a wrong proposition, an
// action outside a scope and a DENY, each refused with its named reason.
// The chain verifies at the end.
func TestApprovalLoopAcrossProcesses(t *testing.T) {
	bin := buildAudit(t)
	policies := writePolicies(t, string(fixtures.DemoPolicies))
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			db := demoLedgerFile(t)
			args := []string{"--db", db, "--policies", policies, "--operator-keys", keysFile(t)}
			if transport == "http" {
				args = append(args, "--http", "127.0.0.1:0")
			}
			p := startMCP(t, args...)
			loopAcrossProcesses(t, p, bin, db)
		})
	}
}

func loopAcrossProcesses(t *testing.T, p *mcpProcess, bin, db string) {
	const pid = "P-api-cert-valid" // accepted evidence: the warrant layer allows, the edge policy asks
	protected := deleteOn(pid, "rm", "protected/report.txt")
	ask := func(args map[string]any) string {
		t.Helper()
		r := p.call("may_act", args)
		id, _ := r.out["decision_id"].(string)
		if r.out["decision"] != "REQUIRE_CONFIRMATION" || id == "" {
			t.Fatalf("want REQUIRE_CONFIRMATION with a decision_id: %+v", r)
		}
		return id
	}
	present := func(args map[string]any, approval, want, reason string) map[string]any {
		t.Helper()
		r := p.call("may_act", with(args, "approval_id", approval))
		l, why := approvalLayerOf(r.out)
		if r.out["decision"] != want || l == nil || l["decision"] != want || !strings.HasPrefix(why, reason+":") {
			t.Fatalf("approval %s: want %s with %s, got %v / %q (%+v)", approval, want, reason, r.out["decision"], why, r)
		}
		return l
	}

	// Expiry first, so the wait overlaps the other cases.
	expiring := approvalID(t, operator(t, bin, db, "approve", ask(protected), "--once", "--until", "2s", "--key", opKey(t, "alice"), "--json"))
	expiresAt := time.Now().Add(2 * time.Second)

	// The loop: approve once, lifted once, refused as used.
	asked := ask(protected)
	once := approvalID(t, operator(t, bin, db, "approve", asked, "--once", "--key", opKey(t, "alice"), "--json"))
	l := present(protected, once, "MAY_ACT", "APPROVED")
	if d, _ := l["detail"].(map[string]any); d["approver"] != "alice" || d["approval_id"] != once || d["decision_id"] != asked {
		t.Errorf("approval layer detail: %v", l["detail"])
	}
	present(protected, once, "REQUIRE_CONFIRMATION", "APPROVAL_USED")

	// A rejection, with its note.
	rejected := ask(protected)
	rejection := approvalID(t, operator(t, bin, db, "reject", rejected, "--key", opKey(t, "bob"), "--note", "not before the backup", "--json"))
	_, why := approvalLayerOf(p.call("may_act", with(protected, "approval_id", rejection)).out)
	if !strings.HasPrefix(why, "APPROVAL_REJECTED:") || !strings.Contains(why, "not before the backup") {
		t.Errorf("rejection: %q", why)
	}

	// A once approval covers exactly its action: another path is another
	// action, the same delete judged without the proposition is refused as
	// another proposition, and neither spends it.
	exact := approvalID(t, operator(t, bin, db, "approve", ask(protected), "--once", "--key", opKey(t, "alice"), "--json"))
	present(deleteOn(pid, "rm", "protected/other.txt"), exact, "REQUIRE_CONFIRMATION", "APPROVAL_WRONG_ACTION")
	present(deleteOn("", "rm", "protected/report.txt"), exact, "REQUIRE_CONFIRMATION", "APPROVAL_WRONG_PROPOSITION")
	present(protected, exact, "MAY_ACT", "APPROVED")

	// A scope: other actions inside it go ahead, one outside it does not,
	// and no approval lifts a DENY.
	scope := approvalID(t, operator(t, bin, db, "approve", ask(protected), "--scope-tool", "rm", "--until", "1h", "--key", opKey(t, "carol"), "--json"))
	present(deleteOn(pid, "rm", "protected/other.txt"), scope, "MAY_ACT", "APPROVED")
	present(deleteOn(pid, "shred", "protected/other.txt"), scope, "REQUIRE_CONFIRMATION", "APPROVAL_OUT_OF_SCOPE")
	present(deleteOn(pid, "rm", "/etc/hosts"), scope, "DENY", "APPROVAL_CANNOT_LIFT_DENY")
	present(deleteOn(pid, "rm", "/etc/hosts"), once, "DENY", "APPROVAL_CANNOT_LIFT_DENY")

	time.Sleep(time.Until(expiresAt))
	present(protected, expiring, "REQUIRE_CONFIRMATION", "APPROVAL_EXPIRED")

	if out := operator(t, bin, db, "verify"); !strings.Contains(out, ":") {
		t.Errorf("ewp-audit verify: %q", out)
	}
}
