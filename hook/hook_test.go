package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/console/consolelink"
	"github.com/ewp-go/ewp/internal/mcpwire"
	"github.com/ewp-go/ewp/warrant"
)

// fakeJudge answers a fixed verdict and remembers what it was asked.
type fakeJudge struct {
	v       Verdict
	err     error
	asked   []Query
	results []audit.Result
}

func (f *fakeJudge) Judge(_ context.Context, q Query) (Verdict, error) {
	f.asked = append(f.asked, q)
	return f.v, f.err
}

func (f *fakeJudge) Recorded(_ context.Context, c Caller, key string) (string, error) {
	for _, q := range f.asked {
		if q.IdempotencyKey == key && q.Caller.Principal.Name == c.Principal.Name {
			return "dec-" + key, nil
		}
	}
	return "", audit.ErrNotFound
}

func (f *fakeJudge) RecordResult(_ context.Context, _ Caller, res audit.Result) error {
	f.results = append(f.results, res)
	return nil
}

var bot = Caller{Principal: audit.Principal{Name: "bot"}, Credential: "agent:bot"}

func pre(tool, input string) string {
	return `{"hook_event_name":"PreToolUse","session_id":"s1","tool_use_id":"t1","cwd":"/w","permission_mode":"default",` +
		`"tool_name":"` + tool + `","tool_input":` + input + `}`
}

func decision(t *testing.T, out []byte) (string, string) {
	t.Helper()
	var raw map[string]map[string]string
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("answer %s: %v", out, err)
	}
	h := raw["hookSpecificOutput"]
	if h["hookEventName"] != PreToolUse {
		t.Fatalf("answer %s: hookEventName %q", out, h["hookEventName"])
	}
	return h["permissionDecision"], h["permissionDecisionReason"]
}

func TestClaudeName(t *testing.T) {
	for in, want := range map[string]string{"Write": "claude-code/Write", "Bash": "claude-code/Bash",
		"mcp__fs__write_file": "fs/write_file", "mcp__my-srv__a__b": "my-srv/a__b"} {
		if got, err := ClaudeName(in); err != nil || got != want {
			t.Errorf("ClaudeName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "mcp__", "mcp__fs", "mcp____t", "a/b", "Wri\u202ete", strings.Repeat("a", 201)} {
		if _, err := ClaudeName(bad); !errors.Is(err, ErrInput) {
			t.Errorf("ClaudeName(%q): %v, want a refusal", bad, err)
		}
	}
}

// Each verdict becomes its permissionDecision, with the decision_id in
// the reason and, for the operator's confirmation, where to approve: the
// command, and the console's page of the decision.
func TestPreToolUseAnswers(t *testing.T) {
	w := Where{DB: "--db /l.db", ConsoleURL: "http://127.0.0.1:1/console/"}
	cases := []struct {
		v          Verdict
		want, says string
	}{
		{Verdict{Decision: audit.VerdictMayAct, DecisionID: "d1"}, "allow", "ewp: MAY_ACT (decision_id d1)"},
		{Verdict{Decision: audit.VerdictDeny, DecisionID: "d2", Reasons: []string{"edge_policies: no\x1b[2J"}}, "deny", `edge_policies: no\x1b[2J`},
		{Verdict{Decision: audit.VerdictRequireConfirmation, DecisionID: "d3"}, "deny",
			// the link the console answers (console's TestConsoleLinkIsAnsweredByTheConsole)
			"`ewp-audit approve d3 --once --db /l.db` or at " + consolelink.Decision(w.ConsoleURL, "d3") + ";"},
		{Verdict{Decision: audit.VerdictRequireConfirmation, DecisionID: "d4", ConfirmBy: ConfirmUser}, "ask", "the user confirm"},
		{Verdict{Decision: "SOMETHING"}, "deny", "SOMETHING"},
	}
	for _, c := range cases {
		j := &fakeJudge{v: c.v}
		out, err := ClaudeCode(context.Background(), j, bot, []byte(pre("Write", `{"file_path":"/w/a","content":"x"}`)), w)
		if err != nil {
			t.Fatal(err)
		}
		got, reason := decision(t, out)
		if got != c.want || !strings.Contains(reason, c.says) {
			t.Errorf("%+v: %s %q; want %s and %q", c.v, got, reason, c.want, c.says)
		}
	}
}

// The query carries the manifest's name, the arguments as sent, the
// session's directory and a key naming the call.
func TestPreToolUseQuery(t *testing.T) {
	j := &fakeJudge{v: Verdict{Decision: audit.VerdictMayAct}}
	if _, err := ClaudeCode(context.Background(), j, bot, []byte(pre("mcp__fs__write_file", `{"path":"a"}`)), Where{}); err != nil {
		t.Fatal(err)
	}
	q := j.asked[0]
	if q.Tool != "fs/write_file" || string(q.Arguments) != `{"path":"a"}` || q.Root != "/w" ||
		q.IdempotencyKey != "claude-code:s1:t1" || q.Entrance != EntranceClaudeCode || q.Caller.Principal.Name != "bot" {
		t.Errorf("query %+v", q)
	}
}

// What a lenient decoder would read differently is refused.
func TestHookInputRefusals(t *testing.T) {
	cases := map[string]string{
		"repeated key":      `{"hook_event_name":"PreToolUse","tool_name":"Read","tool_name":"Bash","tool_input":{}}`,
		"case variant":      `{"hook_event_name":"PreToolUse","tool_name":"Read","Tool_Name":"Bash","tool_input":{}}`,
		"repeated argument": pre("Bash", `{"command":"ls","command":"rm -rf /"}`),
		"lone surrogate":    pre("Write", `{"file_path":"/w/\ud800","content":""}`),
		"invalid UTF-8":     pre("Write", "{\"file_path\":\"/w/\xff\"}"),
		"no tool_input":     `{"hook_event_name":"PreToolUse","tool_name":"Read"}`,
		"input not object":  pre("Read", `[1]`),
		"trailing data":     pre("Read", `{}`) + `{}`,
		"unknown event":     `{"hook_event_name":"Stop","tool_name":"Read","tool_input":{}}`,
		"long session":      `{"hook_event_name":"PreToolUse","session_id":"` + strings.Repeat("s", MaxKeyBytes+1) + `","tool_use_id":"t","tool_name":"Read","tool_input":{}}`,
		"over the limit":    pre("Write", `{"content":"`+strings.Repeat("x", MaxBody)+`"}`),
	}
	for name, body := range cases {
		j := &fakeJudge{v: Verdict{Decision: audit.VerdictMayAct}}
		_, err := ClaudeCode(context.Background(), j, bot, []byte(body), Where{})
		if !errors.Is(err, ErrInput) || len(j.asked) != 0 {
			t.Errorf("%s: %v (asked %d), want a refusal before the gate", name, err, len(j.asked))
		}
	}
	// A newer client's extra members are left alone; an escaped
	// backslash before "u" is text, not an escape.
	j := &fakeJudge{v: Verdict{Decision: audit.VerdictMayAct}}
	body := `{"hook_event_name":"PreToolUse","new_field":{"x":1},"tool_name":"Write","tool_input":{"file_path":"/w/\\ud800","content":"\ud83d\ude00"}}`
	if _, err := ClaudeCode(context.Background(), j, bot, []byte(body), Where{}); err != nil {
		t.Errorf("valid input refused: %v", err)
	}
}

// PostToolUse records ok with the response's hash for the decision the
// PreToolUse made; PostToolUseFailure records tool_error with its error.
func TestPostToolUseRecordsTheResult(t *testing.T) {
	j := &fakeJudge{v: Verdict{Decision: audit.VerdictMayAct}}
	ctx := context.Background()
	if _, err := ClaudeCode(ctx, j, bot, []byte(pre("Write", `{}`)), Where{}); err != nil {
		t.Fatal(err)
	}
	post := `{"hook_event_name":"PostToolUse","session_id":"s1","tool_use_id":"t1","tool_name":"Write","tool_input":{},"tool_response":{"ok":true}}`
	out, err := ClaudeCode(ctx, j, bot, []byte(post), Where{})
	if err != nil || string(out) != "{}" {
		t.Fatalf("PostToolUse: %s, %v", out, err)
	}
	fail := `{"hook_event_name":"PostToolUseFailure","session_id":"s1","tool_use_id":"t1","tool_name":"Write","tool_input":{},"error":"disk full"}`
	if _, err := ClaudeCode(ctx, j, bot, []byte(fail), Where{}); err != nil {
		t.Fatal(err)
	}
	if len(j.results) != 2 || j.results[0].DecisionID != "dec-claude-code:s1:t1" || j.results[0].Status != audit.ResultOK ||
		len(j.results[0].SHA256) != 64 || j.results[1].Status != audit.ResultToolError || j.results[1].Message != "disk full" {
		t.Errorf("results %+v", j.results)
	}
	// Another agent cannot report on this one's call.
	other := Caller{Principal: audit.Principal{Name: "eve"}}
	if _, err := ClaudeCode(ctx, j, other, []byte(post), Where{}); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("another agent's PostToolUse: %v", err)
	}
}

// Over HTTP every failure is an answer that blocks: Claude Code gets a
// deny (status 200, which it obeys whatever onFailure says), the
// tool-call endpoint a DENY with a 4xx/5xx; an unauthenticated request
// gets only the authenticator's answer.
func TestHTTPFailsClosed(t *testing.T) {
	j := &fakeJudge{err: errors.New("disk on fire at /secret/path")}
	authOK := func(http.ResponseWriter, *http.Request) (Caller, bool) { return bot, true }
	mux := http.NewServeMux()
	(&Server{Judge: j, Auth: authOK, Log: slog.New(slog.DiscardHandler)}).Route(mux)
	post := func(path, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		return rec
	}
	rec := post(PathClaudeCode, pre("Write", `{}`))
	got, reason := decision(t, rec.Body.Bytes())
	if rec.Code != 200 || got != "deny" || strings.Contains(reason, "/secret") || rec.Header().Get("X-EWP-Status") != "500" {
		t.Errorf("internal error: %d %s %q", rec.Code, got, reason)
	}
	rec = post(PathClaudeCode, `{"tool_name":"x","Tool_Name":"y"}`)
	if got, reason := decision(t, rec.Body.Bytes()); got != "deny" || !strings.Contains(reason, "keys are matched exactly") {
		t.Errorf("bad input: %s %q", got, reason)
	}
	rec = post(PathClaudeCode, strings.Repeat(" ", MaxBody+1))
	if got, _ := decision(t, rec.Body.Bytes()); got != "deny" || rec.Header().Get("X-EWP-Status") != "413" {
		t.Errorf("oversized: %s %s", got, rec.Header().Get("X-EWP-Status"))
	}
	rec = post(PathToolCall, `{"tool":"openclaw/write","arguments":{}}`)
	var a ToolCallAnswer
	if json.Unmarshal(rec.Body.Bytes(), &a); rec.Code != 500 || a.Decision != audit.VerdictDeny {
		t.Errorf("tool-call internal error: %d %+v", rec.Code, a)
	}
	j = &fakeJudge{}
	mux = http.NewServeMux()
	(&Server{Judge: j, Auth: func(w http.ResponseWriter, _ *http.Request) (Caller, bool) {
		w.WriteHeader(http.StatusUnauthorized)
		return Caller{}, false
	}}).Route(mux)
	rec = post(PathClaudeCode, pre("Write", `{}`))
	if rec.Code != 401 || len(j.asked) > 0 {
		t.Errorf("unauthenticated: %d, asked %d", rec.Code, len(j.asked))
	}
}

func TestToolCall(t *testing.T) {
	ctx := context.Background()
	j := &fakeJudge{v: Verdict{Decision: audit.VerdictRequireConfirmation, DecisionID: "d9", ConfirmBy: ConfirmUser}}
	out, err := ToolCall(ctx, j, bot, []byte(`{"tool":"openclaw/write","arguments":{"path":"a"},"session":"s","call_id":"c","agent":"main"}`), Where{})
	if err != nil {
		t.Fatal(err)
	}
	var a ToolCallAnswer
	json.Unmarshal(out, &a)
	if a.Decision != audit.VerdictRequireConfirmation || a.ConfirmBy != ConfirmUser || a.DecisionID != "d9" ||
		j.asked[0].Entrance != EntranceOpenClaw || j.asked[0].Client != "main" || j.asked[0].IdempotencyKey != "tool-call:s:c" {
		t.Errorf("answer %+v, query %+v", a, j.asked[0])
	}
	if out, err := ToolCall(ctx, j, bot, []byte(`{"event":"after","session":"s","call_id":"c","status":"ok"}`), Where{}); err != nil ||
		!bytes.Contains(out, []byte("recorded")) || j.results[0].DecisionID != "dec-tool-call:s:c" {
		t.Errorf("after: %s, %v, %+v", out, err, j.results)
	}
	for _, bad := range []string{`{"tool":"write"}`, `{"tool":"a/b/c"}`, `{"event":"later"}`, `{"event":"after","status":"ok"}`,
		`{"event":"after","session":"s","call_id":"c","status":"fine"}`, `{"tool":"openclaw/write","arguments":[]}`} {
		if _, err := ToolCall(ctx, j, bot, []byte(bad), Where{}); !errors.Is(err, ErrInput) {
			t.Errorf("%s: %v, want a refusal", bad, err)
		}
	}
	var we *warrant.Error
	// The agent name is recorded, ids or not, so it is bounded either way.
	long := strings.Repeat("a", MaxKeyBytes+1)
	for _, ids := range []string{``, `"session":"s","call_id":"c",`} {
		_, err = ToolCall(ctx, j, bot, []byte(`{"tool":"openclaw/write","arguments":{},`+ids+`"agent":"`+long+`"}`), Where{})
		if !errors.As(err, &we) || we.Code != warrant.CodeLimitExceeded || we.Field != "agent" {
			t.Errorf("an agent name over %d bytes (ids %q): %v", MaxKeyBytes, ids, err)
		}
	}
	_, err = ToolCall(ctx, j, bot, []byte(`{"tool":"openclaw/write","Tool":"x"}`), Where{})
	if !errors.As(err, &we) || we.Code != warrant.CodeInvalidAction || we.Field != "Tool" {
		t.Errorf("case variant: %v", err)
	}
}

// A request naming another Host, or a web page's Origin, is refused
// before the credential is looked at: the DNS-rebinding guard.
func TestHostGuard(t *testing.T) {
	j := &fakeJudge{v: Verdict{Decision: audit.VerdictMayAct}}
	mux := http.NewServeMux()
	(&Server{Judge: j, Auth: func(http.ResponseWriter, *http.Request) (Caller, bool) { return bot, true },
		Hosts: mustHosts(t, "127.0.0.1:8765")}).Route(mux)
	cases := []struct {
		host, origin, want string
	}{
		{"127.0.0.1:8765", "", "allow"},
		{"127.0.0.1:8765", "http://127.0.0.1:8765", "allow"},
		{"evil.example:8765", "", "deny"},
		{"127.0.0.1:8765", "http://evil.example", "deny"},
		{"LOCALHOST:8765", "http://localhost:8765", "allow"}, // a loopback bind's other names, any case
		{"127.0.0.1:8765", "http://127.0.0.1:8765.evil.example", "deny"},
	}
	allowed := 0
	for _, c := range cases {
		if c.want == "allow" {
			allowed++
		}
		req := httptest.NewRequest(http.MethodPost, PathClaudeCode, strings.NewReader(pre("Read", `{}`)))
		req.Host = c.host
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if got, reason := decision(t, rec.Body.Bytes()); got != c.want {
			t.Errorf("Host %s Origin %q: %s %q, want %s", c.host, c.origin, got, reason, c.want)
		}
	}
	if len(j.asked) != allowed {
		t.Errorf("the gate was asked %d times, want %d (only the allowed hosts)", len(j.asked), allowed)
	}
}

func mustHosts(t *testing.T, addr string) mcpwire.Hosts {
	t.Helper()
	h, err := mcpwire.NewHosts(addr)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
