package mcp

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/grounding"
)

// GraphSource is the concept graph as the grounding guard needs it
// (GROUNDING.md §0). graphstore.Store implements it over the ledger.
type GraphSource interface {
	// Graph returns the current graph and its version. Versions only grow;
	// the guard re-validates edge-policy placements whenever it changes.
	Graph(ctx context.Context) (*grounding.Graph, int64, error)
	// Learn validates the fill cand proposes for gap against the live graph
	// and writes it, stamped LEARNED, whole or not at all. Refusals are the
	// grounding package's error types.
	Learn(ctx context.Context, gap grounding.Gap, cand grounding.Candidate) ([]grounding.Primitive, error)
}

// Guard configures the grounding guard of WithGuard.
type Guard struct {
	Graph GraphSource
	// Policies are the operator's edge policies (nil: none). The operator
	// loads them at start; an agent can never supply one. Placements should
	// be validated against the graph before serving (the server refuses to
	// start on an orphan); at run time a placement the graph no longer has
	// makes every guarded action DENY until the operator fixes it.
	Policies *edgepolicy.Set
}

// WithGuard installs the grounding guard: the tools check_grounding and
// gap_template (read-only) and learn_gap (a write), and two may_act layers
// after the warrant layer: grounding, and edge_policies when Policies is
// set. Both layers judge only actions that name action.concepts; an action
// without concepts gets exactly the EWP answer.
func WithGuard(g Guard) Option {
	return func(s *Server) {
		gd := &guard{src: g.Graph, policies: g.Policies, srv: s}
		s.guard = gd
		s.layers = append(s.layers, groundingLayer{gd})
		if g.Policies != nil {
			s.layers = append(s.layers, policyLayer{gd})
		}
	}
}

// guard is the installed guard plus the placement check it caches per
// graph version.
type guard struct {
	src      GraphSource
	policies *edgepolicy.Set
	srv      *Server // for its logger, which a later option may set

	mu          sync.Mutex
	validated   bool
	validatedAt int64
	orphans     []edgepolicy.Orphan
}

// orphansAt validates the policy placements against g once per graph
// version. A graph that moved on can strand a placement (a re-ingested
// document dropped its edge); the policy could then never fire, so the
// caller fails closed instead of silently losing the protection.
func (gd *guard) orphansAt(g *grounding.Graph, version int64) []edgepolicy.Orphan {
	gd.mu.Lock()
	defer gd.mu.Unlock()
	if gd.validated && gd.validatedAt == version {
		return gd.orphans
	}
	gd.orphans, gd.validatedAt, gd.validated = gd.policies.Validate(g), version, true
	if len(gd.orphans) > 0 {
		gd.srv.log.Error("edge policies no longer match the concept graph; guarded actions are denied until fixed",
			"graph_version", version, "orphans", edgepolicy.FormatOrphans(gd.orphans))
	}
	return gd.orphans
}

// guardCall is the guard's view of one may_act call: the action's guard
// fields, and the grounding check computed once and shared by the grounding
// and edge-policy layers, so both judge the same graph version and trace.
type guardCall struct {
	act guardAction

	once    sync.Once
	graph   *grounding.Graph
	version int64
	result  grounding.Result
	err     error
}

func (c *guardCall) check(ctx context.Context, src GraphSource) error {
	c.once.Do(func() {
		c.graph, c.version, c.err = src.Graph(ctx)
		if c.err == nil {
			c.result, c.err = c.graph.Check(c.act.concepts, c.act.minDepth)
		}
	})
	return c.err
}

// guardFor reads the action's guard fields; nil when there is no guard or
// the action names no concepts. Without a guard, decodeAction has already
// refused every guard field as unknown.
func (s *Server) guardFor(fields map[string]json.RawMessage) (*guardCall, error) {
	if s.guard == nil {
		return nil, nil
	}
	act, ok, err := decodeGuardAction(fields)
	if err != nil || !ok {
		return nil, err
	}
	return &guardCall{act: act}, nil
}

// guardInstructions extends the server instructions when the guard is
// installed, so an agent learns the habit before its first destructive call.
func (s *Server) guardInstructions() string {
	if s.guard == nil {
		return ""
	}
	return "- Before a tool call that changes things, ask may_act with action.concepts (every concept the call " +
		"touches, e.g. [\"delete\", \"file\"]), action.tool_name and action.arguments; check_grounding shows what " +
		"the concept graph knows and gap_template/learn_gap help fill a gap (with the user's approval).\n"
}
