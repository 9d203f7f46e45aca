package front

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/console/consolelink"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// events is the order things happened in, across the fakes.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(s string) { e.mu.Lock(); e.log = append(e.log, s); e.mu.Unlock() }
func (e *events) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

// fakeGate decides by the request's Call.Name: its verdicts map, MAY_ACT
// otherwise.
type fakeGate struct {
	ev       *events
	verdicts map[string]warrant.Verdict
	mu       sync.Mutex
	results  []audit.Result
	reqs     []gate.Request
}

func (g *fakeGate) Decide(_ context.Context, r gate.Request) (gate.Answer, error) {
	g.ev.add("decide " + r.Call.Name)
	g.mu.Lock()
	g.reqs = append(g.reqs, r)
	g.mu.Unlock()
	v, ok := g.verdicts[r.Call.Name]
	if !ok {
		v = warrant.MayActDecision
	}
	l := gate.LayerDecision{Layer: "evidence", Decision: audit.Verdict(v), Reasons: []string{"because " + string(v)}}
	return gate.Answer{Decision: v, DecisionID: "d-" + r.Call.Name, Layers: []gate.LayerDecision{l}}, nil
}

func (g *fakeGate) Refuse(_ context.Context, tool string, r gate.Request, err error) error {
	g.ev.add("refuse " + r.Call.Name)
	return &gate.RecordedError{Err: err, ID: "r-" + r.Call.Name}
}

func (g *fakeGate) RecordResult(_ context.Context, res audit.Result) error {
	g.ev.add("result " + string(res.Status))
	g.mu.Lock()
	g.results = append(g.results, res)
	g.mu.Unlock()
	return nil
}

// fakeManifest permits every name but those in deny.
type fakeManifest struct{ deny map[string]bool }

func (m fakeManifest) Permits(name string) bool { return !m.deny[name] }
func (m fakeManifest) Request(name string, args json.RawMessage, p audit.Principal) (gate.Request, error) {
	if strings.Contains(string(args), "bad-argument") {
		return gate.Request{}, &warrant.Error{Code: "EWP_REFUSE_INVALID_ARGUMENT", Field: "/arguments/path", Rule: "outside every rule"}
	}
	return gate.Request{Agent: p, Call: &gate.ToolCall{Entrance: "gateway", Name: name, Arguments: args}}, nil
}

type fakeDown struct {
	ev    *events
	tools []Tool
}

func (d *fakeDown) Tools() []Tool { return d.tools }
func (d *fakeDown) Call(_ context.Context, srv, name string, _ json.RawMessage, progress func(Progress)) (*mcp.CallToolResult, error) {
	d.ev.add("forward " + srv + "/" + name)
	switch name {
	case "slow":
		if progress == nil {
			return mcp.NewToolResultError("no progress token reached the downstream"), nil
		}
		progress(Progress{Progress: 1, Total: 2, Message: "half"})
		progress(Progress{Progress: 2, Total: 2})
	case "boom":
		return nil, errors.New("the server exited (signal: killed)")
	case "oops":
		return mcp.NewToolResultError("no such file"), nil
	}
	return mcp.NewToolResultText("did " + name), nil
}

func tool(srv, name string) Tool {
	return Tool{Server: srv, Def: mcp.NewTool(name, mcp.WithDescription("the "+name+" tool"))}
}

type fixture struct {
	ev   *events
	gate *fakeGate
	down *fakeDown
	f    *Front
	c    *client.Client
}

func newFixture(t *testing.T, verdicts map[string]warrant.Verdict) *fixture {
	t.Helper()
	ev := &events{}
	fx := &fixture{ev: ev, gate: &fakeGate{ev: ev, verdicts: verdicts}}
	withheld := tool("fs", "changed")
	withheld.Withheld = "its definition changed since it was pinned"
	fx.down = &fakeDown{ev: ev, tools: []Tool{tool("fs", "read"), tool("fs", "slow"), tool("fs", "write"), tool("fs", "boom"),
		tool("fs", "oops"), tool("fs", "secret"), withheld, tool("echo", "echo")}}
	fx.f = New(Config{Name: "ewp-gateway", Version: "test", Gate: fx.gate,
		Manifest: fakeManifest{deny: map[string]bool{"fs/secret": true}}, Downstreams: fx.down,
		Approve: Approve{ConsoleURL: "http://127.0.0.1:9/console/", Command: "ewp-audit --db l.sqlite approve --once"}})
	c, err := client.NewInProcessClient(fx.f.MCP())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	fx.c = c
	return fx
}

func (fx *fixture) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := fx.c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func decisionID(res *mcp.CallToolResult) any {
	if res.Meta == nil {
		return nil
	}
	return res.Meta.AdditionalFields[MetaDecisionID]
}

func TestListShowsPermittedPinnedToolsAsServerTool(t *testing.T) {
	fx := newFixture(t, nil)
	res, err := fx.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if tl.Name == "fs__read" && tl.Description != "the read tool" {
			t.Errorf("fs__read's description = %q, want the downstream's", tl.Description)
		}
	}
	want := []string{"echo__echo", "fs__boom", "fs__oops", "fs__read", "fs__slow", "fs__write"}
	if !slices.Equal(names, want) {
		t.Errorf("tools/list = %v, want %v (fs__secret: no rule permits it; fs__changed: withheld)", names, want)
	}
}

func TestMayActIsDecidedBeforeItIsForwardedAndItsResultRecorded(t *testing.T) {
	fx := newFixture(t, nil)
	res := fx.call(t, "fs__read", map[string]any{"path": "/a"})
	if res.IsError || text(res) != "did read" {
		t.Fatalf("result = %v %q", res.IsError, text(res))
	}
	if got := decisionID(res); got != "d-fs/read" {
		t.Errorf("_meta %s = %v, want d-fs/read", MetaDecisionID, got)
	}
	fx.f.Close() // results are recorded after the answer
	want := []string{"decide fs/read", "forward fs/read", "result ok"}
	if got := fx.ev.all(); !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	r := fx.gate.results[0]
	if r.DecisionID != "d-fs/read" || len(r.SHA256) != 64 {
		t.Errorf("result recorded = %+v, want the decision and a sha256", r)
	}
	req := fx.gate.reqs[0]
	if req.Agent.Name != audit.Anonymous || req.Call.Entrance != "gateway" || string(req.Call.Arguments) != `{"path":"/a"}` {
		t.Errorf("request = %+v %+v", req.Agent, req.Call)
	}
}

func TestToolErrorAndFailedDownstreamAreRecordedAsSuch(t *testing.T) {
	fx := newFixture(t, nil)
	if res := fx.call(t, "fs__oops", nil); !res.IsError || text(res) != "no such file" {
		t.Errorf("tool error = %v %q, want the downstream's", res.IsError, text(res))
	}
	res := fx.call(t, "fs__boom", nil)
	if !res.IsError || !strings.Contains(text(res), "downstream server fs failed") || !strings.Contains(text(res), "killed") {
		t.Errorf("failed call = %v %q, want a clear error", res.IsError, text(res))
	}
	if decisionID(res) != "d-fs/boom" {
		t.Errorf("failed call's _meta = %v", res.Meta)
	}
	fx.f.Close()
	byID := map[string]audit.Result{}
	for _, r := range fx.gate.results {
		byID[r.DecisionID] = r
	}
	if len(byID) != 2 || byID["d-fs/oops"].Status != audit.ResultToolError || byID["d-fs/boom"].Status != audit.ResultFailed {
		t.Errorf("results = %+v", fx.gate.results)
	}
	if f := byID["d-fs/boom"]; f.SHA256 != "" || f.Message == "" {
		t.Errorf("failed result = %+v, want a message and no hash", f)
	}
}

func TestDenyIsNeverForwarded(t *testing.T) {
	fx := newFixture(t, map[string]warrant.Verdict{"fs/write": warrant.Deny})
	res := fx.call(t, "fs__write", map[string]any{"path": "/protected/x"})
	if !res.IsError || !strings.Contains(text(res), "DENY") || !strings.Contains(text(res), "evidence: because DENY") {
		t.Errorf("deny = %v %q, want DENY with the layer's reasons", res.IsError, text(res))
	}
	if decisionID(res) != "d-fs/write" {
		t.Errorf("deny's _meta = %v", res.Meta)
	}
	if got := fx.ev.all(); !slices.Equal(got, []string{"decide fs/write"}) {
		t.Errorf("events = %v: a denied call must not be forwarded or given a result", got)
	}
}

func TestPendingNamesTheDecisionAndWhereTheOperatorApproves(t *testing.T) {
	fx := newFixture(t, map[string]warrant.Verdict{"fs/write": warrant.RequireConfirmation})
	res := fx.call(t, "fs__write", map[string]any{"path": "/x"})
	s := text(res)
	for _, want := range []string{"REQUIRE_CONFIRMATION", "decision d-fs/write",
		"`ewp-audit --db l.sqlite approve --once d-fs/write`", consolelink.Decision("http://127.0.0.1:9/console/", "d-fs/write"), // a page the console answers
		"retry this identical call"} {
		if !strings.Contains(s, want) {
			t.Errorf("pending answer lacks %q:\n%s", want, s)
		}
	}
	if !res.IsError {
		t.Error("pending is not a tool error")
	}
	if got := fx.ev.all(); !slices.Equal(got, []string{"decide fs/write"}) {
		t.Errorf("events = %v: a pending call must not be forwarded", got)
	}
}

func TestRefusedBeforeTheGate(t *testing.T) {
	fx := newFixture(t, nil)
	res := fx.call(t, "fs__changed", nil)
	if want := CodeWithheld + ": /params/name: tool fs__changed is withheld: its definition changed since it was pinned"; !res.IsError || !strings.Contains(text(res), want) {
		t.Errorf("withheld = %v %q, want %q", res.IsError, text(res), want)
	}
	// A tool no rule could permit is not there at all: the protocol's
	// unknown-tool error, as for a name no server has.
	for _, name := range []string{"fs__secret", "nope"} {
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		if _, err := fx.c.CallTool(context.Background(), req); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s: err = %v, want tool not found", name, err)
		}
	}
	res = fx.call(t, "fs__read", map[string]any{"path": "bad-argument"})
	if !res.IsError || !strings.Contains(text(res), "refused by the operator's manifest: EWP_REFUSE_INVALID_ARGUMENT: /arguments/path: outside every rule") {
		t.Errorf("manifest refusal = %q", text(res))
	}
	if decisionID(res) != "r-fs/read" {
		t.Errorf("manifest refusal's _meta = %v, want its record", res.Meta)
	}
	if got, want := fx.ev.all(), []string{"refuse fs/changed", "refuse fs/read"}; !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v: refusals recorded, nothing decided or forwarded", got, want)
	}
}

// passDown is a registry that passes server docs's resources and prompts.
type passDown struct{ fakeDown }

func (passDown) Passing() ([]string, []string) { return []string{"docs"}, []string{"docs"} }
func (passDown) ListResources(context.Context, string) ([]mcp.Resource, error) {
	return []mcp.Resource{mcp.NewResource("docs://readme", "readme")}, nil
}
func (passDown) ReadResource(_ context.Context, srv, uri string) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, Text: "from " + srv}}}, nil
}
func (passDown) ListPrompts(context.Context, string) ([]mcp.Prompt, error) {
	return []mcp.Prompt{mcp.NewPrompt("greet")}, nil
}
func (passDown) GetPrompt(_ context.Context, srv, name string, _ map[string]string) (*mcp.GetPromptResult, error) {
	return mcp.NewGetPromptResult("", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(srv+"/"+name))}), nil
}

func TestResourcesAndPromptsPassThrough(t *testing.T) {
	f := New(Config{Gate: &fakeGate{ev: &events{}}, Manifest: fakeManifest{}, Downstreams: &passDown{}})
	f.SyncPassthrough(context.Background())
	c, err := client.NewInProcessClient(f.MCP())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	must(t, c.Start(ctx))
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	rr := mcp.ReadResourceRequest{}
	rr.Params.URI = "docs://readme"
	res, err := c.ReadResource(ctx, rr)
	if err != nil || len(res.Contents) != 1 || res.Contents[0].(mcp.TextResourceContents).Text != "from docs" {
		t.Errorf("resources/read = %+v, %v", res, err)
	}
	gp := mcp.GetPromptRequest{}
	gp.Params.Name = "docs__greet"
	pr, err := c.GetPrompt(ctx, gp)
	if err != nil || len(pr.Messages) != 1 || pr.Messages[0].Content.(mcp.TextContent).Text != "docs/greet" {
		t.Errorf("prompts/get = %+v, %v", pr, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A downstream's progress reaches the agent under the token the agent's
// request named.
func TestProgressIsPassedOn(t *testing.T) {
	fx := newFixture(t, nil)
	var mu sync.Mutex
	var got []map[string]any
	fx.c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			got = append(got, n.Params.AdditionalFields)
			mu.Unlock()
		}
	})
	req := mcp.CallToolRequest{}
	req.Params.Name = "fs__slow"
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	res, err := fx.c.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("slow = %v %v", res, err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0]["progressToken"] != "tok-1" || got[0]["message"] != "half" || got[1]["progress"] != 2.0 {
		t.Errorf("progress notifications = %v", got)
	}
}

// A stdio line over the message bound is skipped as it is read and
// answered with a JSON-RPC error naming the bound and how to raise it;
// the requests around it are served.
func TestStdioLineOverTheBound(t *testing.T) {
	f := New(Config{Gate: &fakeGate{ev: &events{}}, Manifest: fakeManifest{}, Downstreams: &passDown{},
		MaxMessageBytes: 1024, RaiseHint: "raise it with --max-request-bytes"})
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 4096) + `"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}, "\n") + "\n"
	// stdin stays open until the last answer is out: mcp-go drops what is
	// in flight when its input ends.
	stdin, feed := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- f.ServeStdio(context.Background(), stdin, outW, nil); _ = outW.Close() }()
	go func() { _, _ = io.WriteString(feed, in) }()
	var ids []string
	tooLong := false
	sc := bufio.NewScanner(outR)
	for len(ids) < 3 && sc.Scan() {
		line := sc.Text()
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not one JSON message a line: %q", line)
		}
		ids = append(ids, string(m.ID))
		if m.Error != nil && string(m.ID) == "null" && m.Error.Code == -32600 &&
			strings.Contains(m.Error.Message, "exceeds 1024 bytes") && strings.Contains(m.Error.Message, "--max-request-bytes") {
			tooLong = true
		}
	}
	_ = feed.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !tooLong || !slices.Contains(ids, "1") || !slices.Contains(ids, "3") || slices.Contains(ids, "2") {
		t.Fatalf("answers %v (the long line refused: %v)", ids, tooLong)
	}
}

// The arguments judged and forwarded are the text the agent sent: an
// integer past 2^53 keeps its digits, and a lone surrogate escape (which
// decoding would rewrite to U+FFFD) is refused on record, not forwarded.
func TestArgumentsAsSent(t *testing.T) {
	fx := newFixture(t, nil)
	send := func(args string) mcp.JSONRPCMessage {
		return fx.f.MCP().HandleMessage(context.Background(), []byte(
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs__read","arguments":`+args+`}}`))
	}
	send(`{"path":"/a","n":9007199254740993}`)
	if len(fx.gate.reqs) != 1 || !strings.Contains(string(fx.gate.reqs[0].Call.Arguments), "9007199254740993") {
		t.Fatalf("judged %+v, want the integer as sent", fx.gate.reqs)
	}
	b, _ := json.Marshal(send(`{"path":"/\ud800"}`))
	if !strings.Contains(string(b), warrant.CodeLoneSurrogate) {
		t.Errorf("a lone surrogate: %s", b)
	}
	if got := fx.ev.all(); !slices.Contains(got, "refuse fs/read") || slices.Equal(got[len(got)-1:], []string{"forward fs/read"}) {
		t.Errorf("events %v: the lone surrogate refused on record, not forwarded", got)
	}
}
