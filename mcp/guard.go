package mcp

import (
	"encoding/json"
	"log/slog"

	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/gate"
)

// GraphSource is the concept graph as the grounding guard needs it; see
// gate.GraphSource.
type GraphSource = gate.GraphSource

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
		s.guard = gate.NewGuard(g.Graph, g.Policies, func() *slog.Logger { return s.log })
		s.layers = append(s.layers, s.guard.Layers()...)
	}
}

// guardFor reads the action's guard fields; nil when there is no guard or
// the action names no concepts. Without a guard, decodeAction has already
// refused every guard field as unknown.
func (s *Server) guardFor(fields map[string]json.RawMessage) (*gate.GuardCall, error) {
	if s.guard == nil {
		return nil, nil
	}
	act, ok, err := decodeGuardAction(fields)
	if err != nil || !ok {
		return nil, err
	}
	return gate.NewGuardCall(act), nil
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
