// Package front is ewp-gateway's face to the agent: an MCP server that
// lists the downstream servers' tools as SERVER__TOOL where the
// operator's manifest could permit them and their pinned definitions
// hold, and sends every tools/call through the gate before forwarding it.
//
// It knows its neighbours only through the small interfaces below, so the
// command (cmd/ewp-gateway) wires in the manifest, the gate and the
// downstream registry, and the tests wire in fakes.
package front

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
)

// Gate is the gate as the front uses it (gate.Gate).
type Gate interface {
	// Decide judges r, records the decision and only then answers.
	Decide(ctx context.Context, r gate.Request) (gate.Answer, error)
	// RecordResult records what a forwarded call did.
	RecordResult(ctx context.Context, res audit.Result) error
	// Refuse records a refusal met before the gate could judge (a
	// withheld tool, arguments the manifest refuses) and returns it, a
	// *gate.RecordedError when on record.
	Refuse(ctx context.Context, tool string, r gate.Request, err error) error
}

// Tool is one downstream tool as the registry knows it.
type Tool struct {
	Server string
	Def    mcp.Tool // as the downstream defines it, its own name
	// Withheld, when not "", is why the tool is not offered (its
	// definition is not pinned, or changed since it was): its calls are
	// refused with this reason, under WithheldCode (CodeWithheld when "").
	Withheld, WithheldCode string
}

// Codes of the refusals the front itself makes.
const (
	// CodeWithheld: the tool is withheld (its registry gave no code).
	CodeWithheld = "EWP_REFUSE_TOOL_WITHHELD"
	// CodeInvalidArgument: the arguments are not a JSON object (package
	// mcp's and the manifest's code).
	CodeInvalidArgument = "EWP_REFUSE_INVALID_ARGUMENT"
)

// Downstreams is the registry of downstream servers.
type Downstreams interface {
	// Tools is every tool of every server now connected.
	Tools() []Tool
	// Call forwards a call of tool (the downstream's own name) on
	// server with args (a JSON object); progress, when not nil, receives
	// the server's progress notifications for it. An error means the
	// call did not complete: the server crashed, hung past its deadline,
	// or spoke garbage. Cancelling ctx cancels the call downstream.
	Call(ctx context.Context, server, tool string, args json.RawMessage, progress func(Progress)) (*mcp.CallToolResult, error)
}

// Progress is one progress notification of a forwarded call.
type Progress struct {
	Progress, Total float64 // Total 0: not said
	Message         string
}

// Manifest is the operator's tool manifest as the front uses it.
type Manifest interface {
	// Permits says whether some rule could permit SERVER/TOOL; the
	// others are not listed.
	Permits(name string) bool
	// Request describes the call of SERVER/TOOL with args as the gate
	// judges it, on behalf of p; its Call.Arguments, the canonical form
	// the gate hashed, is what is forwarded. An error refuses the call
	// without asking the gate (it names the argument and the rule, or
	// the rule that denies the call); a *warrant.Error keeps its code in
	// the record, any other error is recorded as CodeInvalidArgument.
	Request(name string, args json.RawMessage, p audit.Principal) (gate.Request, error)
}

// Config configures New.
type Config struct {
	Name, Version string // the gateway's serverInfo
	Gate          Gate
	Manifest      Manifest
	Downstreams   Downstreams
	// Principal is who the caller of ctx is; nil: anonymous.
	Principal func(ctx context.Context) audit.Principal
	// Approve says where an operator approves a pending decision: the
	// console's URL for it ("" without a console) and the command line.
	Approve Approve
	Log     *slog.Logger
	// MaxMessageBytes bounds one stdio message (a line), as HTTP's body
	// limit bounds a request; DefaultMaxMessageBytes when 0.
	MaxMessageBytes int
	// RaiseHint says in the refusal of a longer message how the operator
	// raises the bound.
	RaiseHint string
}

// DefaultMaxMessageBytes is the stdio message bound when the Config
// gives none: ewp-mcp's default request bound.
const DefaultMaxMessageBytes = 1 << 20

// Front is the gateway's MCP server.
type Front struct {
	cfg   Config
	mcp   *server.MCPServer
	mu    sync.Mutex
	tools map[string]Tool // by exposed name, every known tool (withheld too)

	pending  chan struct{} // one token per result being recorded (record)
	inflight sync.WaitGroup
}

// New returns the front with the registry's tools listed.
func New(cfg Config) *Front {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.Principal == nil {
		cfg.Principal = func(context.Context) audit.Principal { return audit.Principal{Name: audit.Anonymous} }
	}
	f := &Front{cfg: cfg, pending: make(chan struct{}, maxPendingResults)}
	hooks := &server.Hooks{}
	hooks.AddAfterListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		res.Tools = f.listable(ctx, res.Tools)
	})
	f.mcp = server.NewMCPServer(cfg.Name, cfg.Version,
		server.WithToolCapabilities(true), server.WithRecovery(),
		// A withheld tool stays registered, so a call to it reaches the
		// handler and is refused with its reason, but is never listed.
		server.WithHooks(hooks))
	f.Sync()
	return f
}

// MCP is the MCP server, for a transport to serve.
func (f *Front) MCP() *server.MCPServer { return f.mcp }

// Sync lists the registry's tools anew; the registry calls it when a
// server's tools change (it connected, restarted, or said its list
// changed). Clients are told the list changed.
func (f *Front) Sync() {
	all := f.cfg.Downstreams.Tools()
	known := make(map[string]Tool, len(all))
	var listed []server.ServerTool
	for _, t := range all {
		name := Exposed(t.Server, t.Def.Name)
		if !f.cfg.Manifest.Permits(ManifestName(t.Server, t.Def.Name)) {
			continue // never listed, never callable: as if it were not there
		}
		if t.Withheld == "" {
			if err := mcp.ValidateParamHeaderAnnotations(&t.Def); err != nil {
				t.Withheld = "its definition is not one this gateway can offer: " + err.Error()
			}
		}
		known[name] = t
		if t.Withheld != "" {
			f.cfg.Log.Warn("tool withheld", "tool", name, "why", t.Withheld)
		}
		def := t.Def
		def.Name = name
		listed = append(listed, server.ServerTool{Tool: def, Handler: f.handle})
	}
	sort.Slice(listed, func(i, j int) bool { return listed[i].Tool.Name < listed[j].Tool.Name })
	f.mu.Lock()
	f.tools = known
	f.mu.Unlock()
	f.mcp.SetTools(listed...)
}

// tool is the known tool the agent called by name.
func (f *Front) tool(name string) (Tool, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tools[name]
	return t, ok
}

// listable drops the withheld tools from a tools/list answer.
func (f *Front) listable(_ context.Context, tools []mcp.Tool) []mcp.Tool {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := tools[:0:0]
	for _, t := range tools {
		if k, ok := f.tools[t.Name]; ok && k.Withheld == "" {
			out = append(out, t)
		}
	}
	return out
}
