package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Name and Version identify the server in MCP's serverInfo.
const (
	Name    = "ewp-mcp"
	Version = "0.1.0"
)

// Server is the EWP MCP server over a Store. It is safe for concurrent use.
// Build one with New, then serve it with ServeStdio or HTTPHandler.
type Server struct {
	store  Store
	now    func() time.Time
	layers []GateLayer
	guard  *guard // nil unless WithGuard
	log    *slog.Logger
	mcp    *server.MCPServer
	// tools are the registered tools by name, for the HTTP path that
	// serves tools/call without mcp-go's dispatch (httpFront.direct).
	tools map[string]*toolSpec
	// decisions is the decision log; nil unless WithDecisionLog.
	decisions *DecisionLog
}

// Option configures a Server.
type Option func(*Server)

// WithClock replaces the server clock (time.Now). The clock decides
// may_act's evaluation instant and memory_context's default, so tests
// inject a fixed one.
func WithClock(now func() time.Time) Option {
	return func(s *Server) { s.now = now }
}

// WithGateLayer adds a layer to may_act after the warrant layer. Layers can
// only restrict: the combined decision is the most restrictive one.
func WithGateLayer(l GateLayer) Option {
	return func(s *Server) { s.layers = append(s.layers, l) }
}

// WithLogger sets where the server logs (default slog.Default()). Over
// stdio it must not write to standard output.
func WithLogger(l *slog.Logger) Option {
	return func(s *Server) { s.log = l }
}

// New builds a server over store.
func New(store Store, opts ...Option) *Server {
	s := &Server{store: store, now: time.Now, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	s.mcp = server.NewMCPServer(Name, Version,
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, false),
		server.WithPromptCapabilities(false),
		server.WithInstructions(instructions()+s.guardInstructions()),
		// No per-call output-schema validation: results are typed Go
		// values whose encoding is checked against the published schemas
		// by the tests (output_schema_test.go), and checking each answer
		// again cost a third of the server's CPU per call. See README.md
		// "Decisions".
		server.WithRecovery(),
		server.WithResourceRecovery(),
	)
	s.registerTools()
	s.registerResources()
	s.registerPrompts()
	return s
}

// MCPServer is the underlying mcp-go server, for in-process clients.
// It has no JSON-RPC pre-filter (see handleMessage) and no caller role.
func (s *Server) MCPServer() *server.MCPServer { return s.mcp }

// registerTools is the one place tools are registered. The guard tools of
// GROUNDING.md §0 (check_grounding and gap_template, read-only; learn_gap,
// a write) are there only when WithGuard installed a concept graph.
func (s *Server) registerTools() {
	tools := []toolSpec{
		s.listPropositionsTool(),
		s.warrantNowTool(),
		s.evidenceViewGetTool(),
		s.memoryContextTool(),
		s.mayActTool(),
		s.evidenceViewPutTool(),
		s.evidenceRecordTool(),
		s.checkRecordTool(),
	}
	if s.guard != nil {
		tools = append(tools, s.checkGroundingTool(), s.gapTemplateTool(), s.learnGapTool())
	}
	tools = s.withDecisionTools(tools)
	s.tools = make(map[string]*toolSpec, len(tools))
	for i := range tools {
		t := &tools[i]
		s.tools[t.tool.Name] = t
		s.mcp.AddTool(t.tool, s.handler(t))
	}
}

// toolSpec is one tool: its MCP definition and its implementation.
type toolSpec struct {
	tool  mcp.Tool
	write bool     // needs the ingest role, checked before the payload
	names []string // accepted argument names (the input schema's properties)
	// pre runs on the raw arguments before unknown names are refused, for
	// refusals more specific than "unknown argument".
	pre func(context.Context, args) error
	run func(context.Context, args) (any, error)
}

func readTool(name, desc string, in, out schema, run func(context.Context, args) (any, error)) toolSpec {
	return newTool(name, desc, in, out, false, run)
}

func writeTool(name, desc string, in, out schema, run func(context.Context, args) (any, error)) toolSpec {
	return newTool(name, desc, in, out, true, run)
}

func newTool(name, desc string, in, out schema, write bool, run func(context.Context, args) (any, error)) toolSpec {
	in["additionalProperties"] = false
	in["type"] = "object"
	ann := mcp.ToolAnnotation{ReadOnlyHint: ptr(!write)}
	if write {
		ann.DestructiveHint = ptr(false)
	} else {
		ann.OpenWorldHint = ptr(false)
	}
	return toolSpec{
		tool: mcp.Tool{Name: name, Description: desc, RawInputSchema: mustJSON(in),
			RawOutputSchema: mustJSON(out), Annotations: ann},
		write: write,
		names: paramNames(in),
		run:   run,
	}
}

// handler is t as an mcp-go tool handler, for the transports mcp-go
// dispatches.
func (s *Server) handler(t *toolSpec) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw, err := rawArguments(req)
		res, err := s.run(ctx, t, raw, err)
		if err != nil {
			return nil, err // mcp-go answers -32603 with the message
		}
		return res.mcpResult(), nil
	}
}

// run calls t with the checks every tool shares, in the order the
// protocol fixes: role first, then the shape of the arguments (raw, or
// argErr when they could not be read). Refusals are results; err is a
// failure of the server itself, reported as mcp-go's recovery and
// dispatch report one, so both HTTP paths answer alike.
func (s *Server) run(ctx context.Context, t *toolSpec, raw []byte, argErr error) (res toolResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic recovered in %s tool handler: %v", t.tool.Name, r)
			s.log.Error("tool failed", "tool", t.tool.Name, "err", err)
		}
	}()
	if t.write {
		if err := requireIngest(ctx); err != nil {
			return failure(err), nil
		}
	}
	var out any
	ctx, dr := s.beginRecord(ctx, t)
	defer dr.release()
	if err = argErr; err == nil {
		out, err = t.call(ctx, raw)
	}
	out, err = s.finishRecord(ctx, dr, out, err)
	if err != nil {
		s.logRefusal(t.tool.Name, err)
		return failure(err), nil
	}
	return success(out)
}

func (t *toolSpec) call(ctx context.Context, raw []byte) (any, error) {
	a, err := decodeObject("arguments", raw)
	if err != nil {
		return nil, err
	}
	if t.pre != nil {
		if err := t.pre(ctx, a); err != nil {
			return nil, err
		}
	}
	if err := a.only("", t.names); err != nil {
		return nil, err
	}
	return t.run(ctx, a)
}

// logRefusal logs internal failures; refusals are the caller's business
// and are only logged at debug level.
func (s *Server) logRefusal(tool string, err error) {
	te := asToolError(err)
	if te.Error == CodeInternal {
		s.log.Error("tool failed", "tool", tool, "err", err)
		return
	}
	s.log.Debug("tool refused", "tool", tool, "code", te.Error, "message", te.Message)
}

func ptr[T any](v T) *T { return &v }

// timeLayout renders server-clock instants: UTC RFC 3339 with the
// fraction the clock has (the kernel truncates it to microseconds).
const timeLayout = time.RFC3339Nano

// clock returns the server's current instant as an evaluated_at string.
func (s *Server) clock() string {
	return s.now().UTC().Format(timeLayout)
}
