package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	auditpg "github.com/ewp-go/ewp/audit/postgres"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/internal/syncbuf"
)

func TestAuditPath(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"", "/srv/ewp.sqlite.audit"}, {"off", ""}, {"/var/log/ewp.audit", "/var/log/ewp.audit"},
	} {
		if got := auditPath(config{db: "/srv/ewp.sqlite", audit: tc.flag}); got != tc.want {
			t.Errorf("--audit %q: %q, want %q", tc.flag, got, tc.want)
		}
	}
	// A PostgreSQL ledger keeps its log in the same database.
	const url = "postgres://mcp@db.internal/ewp"
	if got := auditPath(config{db: url}); got != url {
		t.Errorf("--db %s: the log is %q, want the same database", url, got)
	}
}

// sharedLog makes the command open ml as its decision log, as the real
// store will be opened by both ewp-mcp and ewp-audit; it returns the path
// the command asked for.
func sharedLog(t *testing.T, ml audit.Log) *string {
	t.Helper()
	var asked string
	prev := openDecisionLog
	openDecisionLog = func(path string, _ auditpg.Options, _ *slog.Logger) (audit.Log, error) {
		asked = path
		return keepOpen{ml}, nil
	}
	t.Cleanup(func() { openDecisionLog = prev })
	return &asked
}

// keepOpen outlives the command's Close, so the test can read the record
// after the server exits.
type keepOpen struct{ audit.Log }

func (keepOpen) Close() error { return nil }

// toolReply is one tools/call answer: the structured result, or the refusal.
type toolReply struct {
	out  map[string]any
	code string
}

func decodeReply(t testing.TB, line []byte) (int, toolReply) {
	t.Helper()
	id, r, err := parseReply(line)
	if err != nil {
		t.Fatal(err)
	}
	return id, r
}

// parseReply is decodeReply for goroutines other than the test's, which
// must not stop the test (they report the error instead).
func parseReply(line []byte) (int, toolReply, error) {
	var m struct {
		ID     int `json:"id"`
		Result struct {
			IsError    bool                    `json:"isError"`
			Content    []struct{ Text string } `json:"content"`
			Structured map[string]any          `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return 0, toolReply{}, fmt.Errorf("not JSON-RPC: %q", line)
	}
	r := toolReply{out: m.Result.Structured}
	if m.Result.IsError {
		var te struct{ Error string }
		if len(m.Result.Content) == 0 || json.Unmarshal([]byte(m.Result.Content[0].Text), &te) != nil || te.Error == "" {
			return 0, toolReply{}, fmt.Errorf("a tool error without its code: %q", line)
		}
		r.code = te.Error
	}
	return m.ID, r, nil
}

func callBody(id int, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

// protectedDelete is a delete the demo policies answer with
// REQUIRE_CONFIRMATION.
func protectedDelete() map[string]any {
	var call struct {
		Arguments map[string]any `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(deleteCall("protected/report.txt")), &call); err != nil {
		panic(err)
	}
	return call.Arguments
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for kk, vv := range m {
		out[kk] = vv
	}
	out[k] = v
	return out
}

// checkLoop drives the loop of issue #12 through do (one transport of the
// real command): REQUIRE_CONFIRMATION with a decision_id, the operator's
// single-use approval (written as ewp-audit writes it), MAY_ACT with the
// approval layer, the same approval again refused as used, and the record
// read back with decision_get.
func checkLoop(t *testing.T, ml audit.Log, do func(tool string, args map[string]any) toolReply) {
	t.Helper()
	first := do("may_act", protectedDelete())
	id, _ := first.out["decision_id"].(string)
	if first.out["decision"] != "REQUIRE_CONFIRMATION" || id == "" {
		t.Fatalf("want REQUIRE_CONFIRMATION with a decision_id: %+v", first)
	}
	ap := &audit.Approval{DecisionID: id, Verdict: audit.Approved, Once: true}
	if err := audittest.NewOperator("alice").Approve(context.Background(), ml, ap); err != nil {
		t.Fatal(err)
	}
	withApproval := with(protectedDelete(), "approval_id", ap.ID)
	lifted := do("may_act", withApproval)
	if lifted.out["decision"] != "MAY_ACT" || !hasApprovalReason(lifted.out, "APPROVED") {
		t.Fatalf("the approval did not lift the decision: %+v", lifted)
	}
	again := do("may_act", withApproval)
	if again.out["decision"] != "REQUIRE_CONFIRMATION" || !hasApprovalReason(again.out, "APPROVAL_USED") {
		t.Fatalf("a used approval was accepted again: %+v", again)
	}
	rec := do("decision_get", map[string]any{"decision_id": lifted.out["decision_id"]})
	if d, _ := rec.out["decision"].(map[string]any); d["outcome"] != "MAY_ACT" || d["approval_id"] != ap.ID {
		t.Fatalf("decision_get: %+v", rec)
	}
}

func hasApprovalReason(out map[string]any, name string) bool {
	layers, _ := out["layers"].([]any)
	for _, l := range layers {
		lo := l.(map[string]any)
		if lo["layer"] != "approval" {
			continue
		}
		for _, r := range lo["reasons"].([]any) {
			if strings.HasPrefix(r.(string), name+":") {
				return true
			}
		}
	}
	return false
}

// The loop through the command over HTTP, the log opened where --audit
// says.
func TestApprovalLoopOverHTTP(t *testing.T) {
	ml := memlog.New(nil)
	asked := sharedLog(t, ml)
	logPath := filepath.Join(t.TempDir(), "decisions.audit")
	var out, errb syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	args := []string{"--demo", "--audit", logPath, "--http", "127.0.0.1:0", "--operator-keys", keysFile(t)}
	go func() {
		done <- run(ctx, args, env(), strings.NewReader(""), &out, &errb, openStore)
	}()
	url := waitForURL(t, &errb)
	if *asked != logPath {
		t.Errorf("opened %q, want --audit %q", *asked, logPath)
	}
	n := 0
	checkLoop(t, ml, func(tool string, args map[string]any) toolReply {
		n++
		resp, err := http.Post(url, "application/json", strings.NewReader(callBody(n, tool, args)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		_, r := decodeReply(t, body)
		return r
	})
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

// The loop through the command over stdio.
func TestApprovalLoopOverStdio(t *testing.T) {
	ml := memlog.New(nil)
	sharedLog(t, ml)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb syncbuf.Buffer
	done := make(chan int)
	args := []string{"--db", graphLedger(t), "--policies", writePolicies(t, string(fixtures.DemoPolicies)), "--operator-keys", keysFile(t)}
	go func() {
		done <- run(context.Background(), args, env(), inR, outW, &errb, openStore)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1"}}}`)
	if !lines.Scan() {
		t.Fatalf("no initialize reply: %s", errb.String())
	}
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	n := 0
	checkLoop(t, ml, func(tool string, args map[string]any) toolReply {
		n++
		fmt.Fprintln(inW, callBody(n, tool, args))
		if !lines.Scan() {
			t.Fatalf("no reply: %s", errb.String())
		}
		_, r := decodeReply(t, lines.Bytes())
		return r
	})
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	first, _ := ml.List(context.Background(), audit.Filter{Limit: 1})
	if c := first[0].Caller; c.ClientName != "claude-code" || c.ClientVersion != "2.1" || c.Transport != "stdio" {
		t.Errorf("caller on record: %+v", c)
	}
}

// processSession is session (guard_test.go) with refusals: it runs the real
// process on stdio and returns every reply.
func processSession(t *testing.T, args []string, calls ...string) []toolReply {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "EWP_MCP_RUN_MAIN=1")
	var errb syncbuf.Buffer
	cmd.Stderr = &errb
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, c := range calls {
		fmt.Fprintln(stdin, strings.Replace(c, `"id":0`, fmt.Sprintf(`"id":%d`, i+1), 1))
	}
	out := make([]toolReply, len(calls))
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for got := 0; got < len(calls) && sc.Scan(); {
		if id, r := decodeReply(t, sc.Bytes()); id > 0 {
			out[id-1], got = r, got+1
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ewp-mcp %v: %v\n%s", args, err, errb.String())
	}
	return out
}

// The real process: decisions carry a decision_id by default, and
// --audit off refuses approval_id and idempotency_key with their codes.
func TestAuditFlagInTheProcess(t *testing.T) {
	r := processSession(t, []string{"--demo"}, callBody(0, "may_act", protectedDelete()))
	if r[0].out["decision"] != "REQUIRE_CONFIRMATION" || r[0].out["decision_id"] == nil {
		t.Errorf("default: %+v", r[0])
	}
	r = processSession(t, []string{"--demo", "--audit", "off"},
		callBody(0, "may_act", protectedDelete()),
		callBody(0, "may_act", with(protectedDelete(), "approval_id", "a-1")),
		callBody(0, "may_act", with(protectedDelete(), "idempotency_key", "k-1")))
	if r[0].out["decision"] != "REQUIRE_CONFIRMATION" || r[0].out["decision_id"] != nil {
		t.Errorf("--audit off answers as before: %+v", r[0])
	}
	if r[1].code != "EWP_REFUSE_APPROVALS_DISABLED" || r[2].code != "EWP_REFUSE_NO_DECISION_LOG" {
		t.Errorf("--audit off: approval_id %q, idempotency_key %q", r[1].code, r[2].code)
	}
}

// A decision log that cannot be opened stops the server, saying how to run
// without one.
func TestDecisionLogMustOpen(t *testing.T) {
	prev := openDecisionLog
	openDecisionLog = func(string, auditpg.Options, *slog.Logger) (audit.Log, error) {
		return nil, errors.New("permission denied")
	}
	t.Cleanup(func() { openDecisionLog = prev })
	r := runWith(t, []string{"--db", ledgerFile(t)}, env(), "")
	if r.code != 1 || !strings.Contains(r.stderr, "permission denied") || !strings.Contains(r.stderr, "--audit off") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r = runWith(t, []string{"--db", ledgerFile(t), "--audit", "off"}, env(), "")
	if r.code != 0 || !strings.Contains(r.stderr, "without a decision log") {
		t.Fatalf("--audit off: exit %d: %s", r.code, r.stderr)
	}
}
