package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
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
	layers []gate.Layer
	guard  *gate.Guard // nil unless WithGuard
	log    *slog.Logger
	mcp    *server.MCPServer
	// tools are the registered tools by name, for the HTTP path that
	// serves tools/call without mcp-go's dispatch (httpFront.direct).
	tools map[string]*toolSpec
	// timeout bounds one tool call or resource read (WithRequestTimeout).
	timeout time.Duration
	// maxRequest bounds one JSON-RPC message on either transport
	// (WithMaxRequestBytes).
	maxRequest int
	// limits bound the views the server decodes (WithLimits).
	limits warrant.Limits
	// decisions is the decision log; nil unless WithDecisionLog.
	decisions *DecisionLog
	// slots caps the tool calls evaluated at once (WithMaxConcurrentCalls):
	// a semaphore, one token per running evaluation.
	slots chan struct{}
	// toolNames is the name set the EWP tools are served under
	// (WithToolNames).
	toolNames string
	// gate decides, records and answers the recorded tools' calls
	// (may_act, check_grounding).
	gate *gate.Gate
	// releaseSlot is s.release, made once (a method value allocates).
	releaseSlot func()
}

// DefaultRequestTimeout is how long a tool call or resource read may run
// before the caller gets CodeTimeout.
const DefaultRequestTimeout = 10 * time.Second

// WithRequestTimeout sets the deadline of every tool call and resource
// read (default DefaultRequestTimeout; d <= 0 keeps the default). The
// deadline is the request's own: it runs from when the request was read
// whole, whatever happens to the connection or input afterwards.
func WithRequestTimeout(d time.Duration) Option {
	return func(s *Server) {
		if d > 0 {
			s.timeout = d
		}
	}
}

// WithMaxRequestBytes bounds one JSON-RPC message, an HTTP body or a stdio
// line (default MaxBodyBytes; n <= 0 keeps the default).
func WithMaxRequestBytes(n int) Option {
	return func(s *Server) {
		if n > 0 {
			s.maxRequest = n
		}
	}
}

// WithLimits sets the limits views given to the server are decoded under
// (the zero Limits means warrant.DefaultLimits).
func WithLimits(l warrant.Limits) Option {
	return func(s *Server) { s.limits = l }
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
func WithGateLayer(l gate.Layer) Option {
	return func(s *Server) { s.layers = append(s.layers, l) }
}

// WithLogger sets where the server logs (default slog.Default()). Over
// stdio it must not write to standard output.
func WithLogger(l *slog.Logger) Option {
	return func(s *Server) { s.log = l }
}

// RequestTimeout is the per-request deadline (WithRequestTimeout), for
// sizing transport timeouts around it.
func (s *Server) RequestTimeout() time.Duration { return s.timeout }

// New builds a server over store.
func New(store Store, opts ...Option) *Server {
	s := &Server{store: store, now: time.Now, log: slog.Default(),
		timeout: DefaultRequestTimeout, maxRequest: MaxBodyBytes}
	for _, o := range opts {
		o(s)
	}
	if s.slots == nil {
		s.slots = make(chan struct{}, DefaultMaxConcurrentCalls())
	}
	s.gate, s.releaseSlot = s.newGate(), s.release
	s.mcp = server.NewMCPServer(Name, Version,
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, false),
		server.WithPromptCapabilities(false),
		server.WithInstructions(instructions()+s.guardInstructions()),
		// No per-call output-schema validation: results are typed Go
		// values whose encoding is checked against the published schemas
		// by the tests (output_schema_test.go), and checking each answer
		// again cost a third of the server's CPU per call. See
		// docs/decisions.md.
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
	tools = s.referenceTools(s.withDecisionTools(tools))
	s.tools = make(map[string]*toolSpec, len(tools))
	for i := range tools {
		t := &tools[i]
		listed := t.tool
		if t.listed != nil {
			listed = *t.listed
		}
		s.tools[listed.Name] = t
		s.mcp.AddTool(listed, s.handler(t))
	}
}

// toolSpec is one tool: its MCP definition and its implementation.
type toolSpec struct {
	tool mcpgo.Tool
	// listed, when set, is how the tool is listed and called (another
	// name and argument shape, WithToolNames); tool keeps its own name,
	// which the decision log and the logs use.
	listed *mcpgo.Tool
	write  bool     // needs the ingest role, checked before the payload
	names  []string // accepted argument names (the input schema's properties)
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
	ann := mcpgo.ToolAnnotation{ReadOnlyHint: ptr(!write)}
	if write {
		ann.DestructiveHint = ptr(false)
	} else {
		ann.OpenWorldHint = ptr(false)
	}
	return toolSpec{
		tool: mcpgo.Tool{Name: name, Description: desc, RawInputSchema: mustJSON(in),
			RawOutputSchema: mustJSON(out), Annotations: ann},
		write: write,
		names: paramNames(in),
		run:   run,
	}
}

// handler is t as an mcp-go tool handler, for the transports mcp-go
// dispatches.
func (s *Server) handler(t *toolSpec) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
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
// dispatch report one, so both HTTP paths answer alike. A recorded tool
// goes to the gate (runGated).
//
// The call runs on a context of its own (callContext): once a request was
// read whole it is answered, and a write committed, even when the client
// closes its end of the connection or its input meanwhile.
func (s *Server) run(ctx context.Context, t *toolSpec, raw []byte, argErr error) (toolResult, error) {
	if t.write {
		if err := requireIngest(ctx); err != nil {
			return failure(err), nil
		}
	}
	start := time.Now()
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	if recordedTools[t.tool.Name] {
		return s.runGated(ctx, t, raw, argErr, start)
	}
	var out any
	err := argErr
	if err == nil {
		err = s.acquire(ctx)
	}
	if err == nil {
		if t.write {
			// A write is waited for: the ledger gives up at the deadline
			// itself, so the answer never says "timed out" about a write
			// that then commits.
			out, err = s.guarded(ctx, t, raw)
			s.release()
		} else {
			out, err = s.bounded(ctx, t, raw)
		}
	}
	if err != nil {
		if isPanic(err) {
			return toolResult{}, err
		}
		return s.refused(t, s.timedOut(ctx, err, start))
	}
	return success(out)
}

// callContext is the context a request is served on: detached from the
// connection's or the input's lifetime, ending only at the server's
// per-request deadline.
func (s *Server) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
}

// callStart is when the request served on ctx (a callContext) began: its
// deadline less the per-request timeout.
func (s *Server) callStart(ctx context.Context) time.Time {
	dl, ok := ctx.Deadline()
	if !ok {
		return time.Now()
	}
	return dl.Add(-s.timeout)
}

// bounded runs a read tool and stops waiting for it at ctx's deadline: an
// evaluation is pure and cannot be interrupted, but its caller need not
// wait for it. The abandoned call ends on its own and its result is
// dropped. The caller holds an evaluation slot (acquire); the evaluation
// releases it when it ends, so abandoned calls still count against the cap.
func (s *Server) bounded(ctx context.Context, t *toolSpec, raw []byte) (any, error) {
	type answer struct {
		out any
		err error
	}
	done, abandon := make(chan answer), make(chan struct{})
	go func() {
		defer s.release()
		out, err := s.guarded(ctx, t, raw)
		select {
		case done <- answer{out, err}:
		case <-abandon:
		}
	}()
	select {
	case a := <-done:
		return a.out, a.err
	case <-ctx.Done():
		close(abandon)
		return nil, ctx.Err()
	}
}

// guarded calls t, turning a panic into a *panicError: the server's own
// failure, answered as mcp-go's recovery answers one.
func (s *Server) guarded(ctx context.Context, t *toolSpec, raw []byte) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{fmt.Errorf("panic recovered in %s tool handler: %v", t.tool.Name, r)}
			s.log.Error("tool failed", "tool", t.tool.Name, "err", err)
		}
	}()
	return t.call(ctx, raw)
}

type panicError struct{ error }

// isPanic is a panic recovered here or in the gate.
func isPanic(err error) bool {
	var p *panicError
	var gp *gate.PanicError
	return errors.As(err, &p) || errors.As(err, &gp)
}

// timedOut turns a failure caused by a deadline into the timeout
// refusal, which says which deadline ran out, after how long, and what
// raises it: the request's own (ctx's), or one of the store's (its
// connect or statement timeout), which can pass first.
func (s *Server) timedOut(ctx context.Context, err error, start time.Time) error {
	var refusal *warrant.Error
	own := errors.Is(ctx.Err(), context.DeadlineExceeded)
	if !own && errors.Is(err, context.DeadlineExceeded) {
		return refuse(CodeTimeout, "", "the store did not answer within its own time limit: the request gave up after %v, "+
			"before the server's %v per-request deadline. Retry; if it persists, ask the operator to check the store "+
			"(its connect_timeout or statement_timeout bounds each attempt)", time.Since(start).Round(time.Millisecond), s.timeout)
	}
	if !errors.Is(err, context.DeadlineExceeded) && (!own || errors.As(err, &refusal)) {
		return err
	}
	return refuse(CodeTimeout, "", "the request took longer than the server's %v per-request deadline and was abandoned; "+
		"a write that timed out was not stored. Narrow the request, or ask the operator to raise ewp-mcp --request-timeout", s.timeout)
}

func (t *toolSpec) call(ctx context.Context, raw []byte) (any, error) {
	if err := textRefusal("", raw); err != nil {
		return nil, err
	}
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
