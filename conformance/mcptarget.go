package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// mcpTarget judges an EWP MCP server: warrant_now (or the reference's
// ewp_warrant_now) for every document, and, where the server has them
// and lets this caller write, evidence_view_put and evidence_view_get so
// that ingest and retrieval are judged too. Tool names are read from
// tools/list. A call that fails at the transport (the server exited,
// answered garbage, or not within the timeout) drops the connection; the
// next case connects afresh (for mcp-stdio, a fresh process).
type mcpTarget struct {
	describe string
	dial     func(ctx context.Context) (*client.Client, func(), error)
	cl       *client.Client
	hangUp   func()
	names    toolNames
	// stderr is the end of what an mcp-stdio server wrote to standard
	// error, shown when it crashes.
	stderr *tailBuffer
	// noWrite is set once the server refused this caller the ingest role.
	noWrite bool
	// fresh, for mcp-stdio with a {tmp} placeholder, starts over on an
	// empty store.
	fresh func() bool
	// graph is the grounding pack graph the server holds, "" for none.
	graph string
}

// toolNames are the server's names for the tools the runner uses; ""
// when it has no such tool.
type toolNames struct {
	warrant, put, get, grounding string
}

// NewMCPStdioTarget runs argv (no shell) as an MCP server over stdio.
// Every "{tmp}" in argv is replaced by a new empty directory each time the
// server starts, so a command such as "ewp-mcp --db {tmp}/ledger.db
// --allow-ingest" gets a fresh store whenever two cases of the pack would
// collide in one.
func NewMCPStdioTarget(argv []string, opts TargetOptions) (Target, error) {
	t := &mcpTarget{describe: "mcp-stdio:" + strings.Join(argv, " "), graph: opts.GroundingGraph}
	var tmp string
	usesTmp := strings.Contains(strings.Join(argv, " "), "{tmp}")
	t.dial = func(ctx context.Context) (*client.Client, func(), error) {
		args := argv
		if usesTmp {
			if tmp == "" {
				d, err := os.MkdirTemp("", "ewp-conformance-")
				if err != nil {
					return nil, nil, err
				}
				tmp = d
			}
			args = make([]string, len(argv))
			for i, a := range argv {
				args[i] = strings.ReplaceAll(a, "{tmp}", tmp)
			}
		}
		t.stderr = &tailBuffer{max: 2048}
		return dialStdio(args, t.stderr)
	}
	if usesTmp {
		t.fresh = func() bool {
			t.drop()
			if tmp != "" {
				_ = os.RemoveAll(tmp)
				tmp = ""
			}
			return true
		}
	}
	return t, nil
}

func dialStdio(argv []string, stderr io.Writer) (*client.Client, func(), error) {
	var cmd *exec.Cmd
	mkCmd := func(_ context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
		cmd = exec.Command(command, args...)
		cmd.Env = env
		return cmd, nil
	}
	cl, err := client.NewStdioMCPClientWithOptions(argv[0], os.Environ(), argv[1:], transport.WithCommandFunc(mkCmd), transport.WithCommandStderrWriter(stderr))
	if err != nil {
		return nil, nil, err
	}
	hangUp := func() {
		if cmd != nil && cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
		_ = cl.Close()
	}
	return cl, hangUp, nil
}

// NewMCPHTTPTarget talks to an MCP server over Streamable HTTP. With
// opts.IngestToken it sends the token as a bearer token, so the server's
// write tools can be judged.
func NewMCPHTTPTarget(url string, opts TargetOptions) (Target, error) {
	t := &mcpTarget{describe: "mcp:" + url, graph: opts.GroundingGraph}
	t.dial = func(ctx context.Context) (*client.Client, func(), error) {
		var o []transport.StreamableHTTPCOption
		if opts.IngestToken != "" {
			o = append(o, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + opts.IngestToken}))
		}
		cl, err := client.NewStreamableHttpClient(url, o...)
		if err != nil {
			return nil, nil, err
		}
		if err := cl.Start(ctx); err != nil {
			return nil, nil, err
		}
		return cl, func() { _ = cl.Close() }, nil
	}
	return t, nil
}

func (t *mcpTarget) Describe() string { return t.describe }

func (t *mcpTarget) Close() error {
	t.drop()
	if t.fresh != nil {
		t.fresh()
	}
	return nil
}

func (t *mcpTarget) drop() {
	if t.hangUp != nil {
		t.hangUp()
	}
	t.cl, t.hangUp = nil, nil
}

// Fresh starts over on an empty store, when the command allows it.
func (t *mcpTarget) Fresh() bool { return t.fresh != nil && t.fresh() }

// connect dials, initializes and reads the tool names.
func (t *mcpTarget) connect(ctx context.Context) error {
	if t.cl != nil {
		return nil
	}
	cl, hangUp, err := t.dial(ctx)
	if err != nil {
		return crash("cannot start or reach the MCP server: %v", err)
	}
	t.cl, t.hangUp = cl, hangUp
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "ewp-conformance", Version: "1"}
	if _, err := cl.Initialize(ctx, req); err != nil {
		t.drop()
		return t.transportError(ctx, "initialize", err)
	}
	tools, err := cl.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.drop()
		return t.transportError(ctx, "tools/list", err)
	}
	t.names = pickNames(tools.Tools)
	if t.names.warrant == "" {
		t.drop()
		return crash("tools/list has neither warrant_now nor ewp_warrant_now: not an EWP MCP server")
	}
	return nil
}

func pickNames(tools []mcp.Tool) toolNames {
	have := map[string]bool{}
	for _, tl := range tools {
		have[tl.Name] = true
	}
	pick := func(name string) string {
		for _, n := range []string{name, "ewp_" + name} {
			if have[n] {
				return n
			}
		}
		return ""
	}
	return toolNames{warrant: pick("warrant_now"), put: pick("evidence_view_put"),
		get: pick("evidence_view_get"), grounding: pick("check_grounding")}
}

func (t *mcpTarget) transportError(ctx context.Context, what string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return timedOut("%s: no answer within the per-case timeout (--timeout); the connection was dropped", what)
	}
	if t.stderr != nil {
		if tail := t.stderr.Bytes(); len(tail) > 0 {
			return crash("%s: %v; standard error ends: %s", what, err, quoteLine(tail))
		}
	}
	return crash("%s: %v", what, err)
}

// call calls a tool and reads its answer: the structured result, or the
// refusal ({"error": code, "message": …} in its text).
func (t *mcpTarget) call(ctx context.Context, name string, args map[string]any) (Answer, error) {
	if err := t.connect(ctx); err != nil {
		return Answer{}, err
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := t.cl.CallTool(ctx, req)
	var broken *transport.Error
	switch {
	case err != nil && (errors.As(err, &broken) || ctx.Err() != nil):
		t.drop()
		return Answer{}, t.transportError(ctx, "tools/call "+name, err)
	case err != nil:
		// A JSON-RPC error answer: the server refused the request itself
		// (one whose arguments it cannot read, for instance). The
		// connection is still in step.
		return Answer{Refusal: &Refusal{Refused: true, Code: "JSON-RPC error", Error: err.Error()}}, nil
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		var r struct{ Error, Message string }
		if json.Unmarshal([]byte(text), &r) != nil || r.Error == "" {
			return Answer{Refusal: &Refusal{Refused: true, Error: text}}, nil
		}
		return Answer{Refusal: &Refusal{Refused: true, Code: r.Error, Error: r.Message}}, nil
	}
	body := []byte(text)
	switch {
	case len(res.RawStructuredContent) > 0:
		body = res.RawStructuredContent
	case res.StructuredContent != nil:
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			body = b
		}
	}
	a, err := parseAnswer(body)
	if err != nil {
		t.drop()
	}
	a.Raw = body
	return a, err
}

// Evaluate sends the document's view inline to warrant_now, with the
// document's evaluated_at and policy identity. The runner attests the
// view's origins (ingest_attestation), which a server honours only for a
// caller with the ingest role. A document that is not JSON cannot be put
// in an MCP call and is skipped.
func (t *mcpTarget) Evaluate(ctx context.Context, doc []byte) (Answer, error) {
	if !json.Valid(doc) {
		return Answer{}, &Broken{Class: Skipped, Detail: "the document is not JSON, and an MCP call carries JSON only"}
	}
	if err := t.connect(ctx); err != nil {
		return Answer{}, err
	}
	args := map[string]any{"ingest_attestation": true}
	var m map[string]json.RawMessage
	if json.Unmarshal(doc, &m) != nil || m == nil {
		args["view"] = json.RawMessage(doc)
		return t.call(ctx, t.names.warrant, args)
	}
	for _, k := range docOnlyKeys {
		if v, ok := m[k]; ok && string(v) != "null" {
			args[k] = v
		}
	}
	view, _ := viewOf(doc)
	args["view"] = view
	return t.call(ctx, t.names.warrant, args)
}

// Stores reports whether the server has the write and read tools and has
// not refused this caller the ingest role. It is asked right after a case
// was evaluated, so the connection (and its tool names) is there; it
// never connects itself, which would have no deadline.
func (t *mcpTarget) Stores() bool {
	return t.cl != nil && !t.noWrite && t.names.put != "" && t.names.get != ""
}

func (t *mcpTarget) Put(ctx context.Context, view json.RawMessage) (Stored, error) {
	a, err := t.call(ctx, t.names.put, map[string]any{"view": view, "ingest_attestation": true})
	if err != nil {
		return Stored{}, err
	}
	if a.Refusal != nil {
		if a.Refusal.Code == "EWP_REFUSE_INGEST_ROLE" {
			t.noWrite = true
		}
		return Stored{Refusal: a.Refusal}, nil
	}
	pid, _ := a.View["proposition_id"].(string)
	vid, _ := a.View["view_id"].(string)
	return Stored{PropositionID: pid, ViewID: vid}, nil
}

func (t *mcpTarget) Get(ctx context.Context, propositionID, viewID string) (Answer, error) {
	a, err := t.call(ctx, t.names.get, map[string]any{"proposition_id": propositionID, "view_id": viewID})
	if err != nil || a.Refusal != nil {
		return a, err
	}
	view, _ := a.View["view"].(map[string]any)
	var members map[string]json.RawMessage
	_ = json.Unmarshal(a.Raw, &members)
	return Answer{View: view, Raw: members["view"]}, nil
}

func (t *mcpTarget) EvaluateStored(ctx context.Context, propositionID, viewID, evaluatedAt string) (Answer, error) {
	return t.call(ctx, t.names.warrant, map[string]any{"proposition_id": propositionID, "view_id": viewID, "evaluated_at": evaluatedAt})
}

// Ground asks check_grounding, when the server has it and holds the
// case's graph.
func (t *mcpTarget) Ground(ctx context.Context, c *GroundingCase) (Answer, error) {
	if err := t.connect(ctx); err != nil {
		return Answer{}, err
	}
	switch {
	case t.names.grounding == "":
		return Answer{}, &Broken{Class: Skipped, Detail: "the server has no check_grounding"}
	case c.Named == "" || c.Named != t.graph:
		return Answer{}, &Broken{Class: Skipped, Detail: fmt.Sprintf("the case runs on graph %s; the server holds %q (--grounding-graph)", graphName(c), t.graph)}
	}
	args := map[string]any{"concepts": c.Query}
	if c.Query == nil {
		args["concepts"] = []string{}
	}
	if c.MinDepth != nil {
		args["min_depth"] = *c.MinDepth
	}
	return t.call(ctx, t.names.grounding, args)
}

func graphName(c *GroundingCase) string {
	if c.Named == "" {
		return "(inline)"
	}
	return strconv.Quote(c.Named)
}
