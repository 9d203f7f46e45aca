package gate

import (
	"context"
	"fmt"
	"strings"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/internal/plural"
)

// Layer names in the gate's answer.
const (
	GroundingLayerName = "grounding"
	PolicyLayerName    = "edge_policies"
)

// groundingLayer denies an action whose concepts are not grounded in the
// concept graph (GROUNDING.md §0, layer 2).
type groundingLayer struct{ g *Guard }

func (groundingLayer) Name() string         { return GroundingLayerName }
func (groundingLayer) ActionKeys() []string { return GuardActionKeys }

func (l groundingLayer) Decide(ctx context.Context, in Input) (LayerDecision, error) {
	c := in.Guard
	if c == nil {
		return LayerDecision{}, ErrNotApplicable
	}
	if err := c.check(ctx, l.g.src); err != nil {
		return LayerDecision{}, err
	}
	r := c.result
	detail := GroundingDetail{Grounded: r.Grounded, Resolved: r.Resolved, Gaps: r.Gaps, GraphVersion: c.version}
	if r.Grounded {
		return LayerDecision{Decision: audit.VerdictMayAct, Detail: detail, Reasons: []string{fmt.Sprintf(
			"grounded: %s (%s in the trace, %s)", strings.Join(r.Resolved, ", "),
			plural.Count(len(r.Trace.Result.Primitives), "concept", "concepts"), plural.Count(len(r.Trace.Result.Pathway), "pathway step", "pathway steps"))}}, nil
	}
	reasons := make([]string, 0, len(r.Gaps))
	for _, g := range r.Gaps {
		reasons = append(reasons, g.Message)
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "action.concepts is empty: an action that names no concept is never grounded")
	}
	return LayerDecision{Decision: audit.VerdictDeny, Reasons: reasons, Detail: detail}, nil
}

// GroundingDetail is the grounding layer's detail: the check without its
// trace (check_grounding shows the trace; the gate only needs the verdict).
type GroundingDetail struct {
	Grounded     bool            `json:"grounded"`
	Resolved     []string        `json:"resolved"`
	Gaps         []grounding.Gap `json:"gaps"`
	GraphVersion int64           `json:"graph_version"`
}

// policyLayer evaluates the operator's edge policies over the APPLIES_TO
// edges of a grounded trace (GROUNDING.md §0, layer 3; §3.3–§3.4).
type policyLayer struct{ g *Guard }

func (policyLayer) Name() string         { return PolicyLayerName }
func (policyLayer) ActionKeys() []string { return GuardActionKeys }

func (l policyLayer) Decide(ctx context.Context, in Input) (LayerDecision, error) {
	c := in.Guard
	if c == nil {
		return LayerDecision{}, ErrNotApplicable
	}
	if err := c.check(ctx, l.g.src); err != nil {
		return LayerDecision{}, err
	}
	if orphans := l.g.orphansAt(c.graph, c.version); len(orphans) > 0 {
		return orphanDenial(orphans, c.version), nil
	}
	if !c.result.Grounded {
		// Fail closed, as VRE's check_policy does: an ungrounded action has
		// no trustworthy trace, so no policy is evaluated and none can pass it.
		return LayerDecision{Decision: audit.VerdictDeny, Detail: policyDetail{Edges: []grounding.Edge{}, Violations: []violation{}},
			Reasons: []string{"policy evaluation requires a grounded result; no policy was evaluated (see the grounding layer)"}}, nil
	}
	return l.evaluate(c, in.Agent), nil
}

func (l policyLayer) evaluate(c *GuardCall, agent audit.Principal) LayerDecision {
	edges := c.result.AppliesToEdges()
	pe := make([]edgepolicy.Edge, len(edges))
	for i, e := range edges {
		pe[i] = edgepolicy.Edge(e)
	}
	vs := l.g.policies.Evaluate(pe, edgepolicy.Request{AgentID: agent.Name, AgentGroups: agent.Groups, ToolName: c.Act.ToolName,
		Cardinality: c.Act.Cardinality, Arguments: c.Act.Arguments})
	decision, reasons := edgepolicy.Decide(vs)
	if len(vs) == 0 {
		reasons = []string{fmt.Sprintf("no edge policy fired on the %d APPLIES_TO edges of the trace", len(edges))}
	}
	return LayerDecision{Decision: audit.Verdict(decision), Reasons: reasons, Detail: policyDetail{Edges: edges, Violations: violations(vs)}}
}

// orphanDenial is the answer while a placement has no edge in the graph.
func orphanDenial(orphans []edgepolicy.Orphan, version int64) LayerDecision {
	reasons := []string{fmt.Sprintf("the edge policies no longer match the concept graph (version %d): every action that names "+
		"concepts is denied until the operator fixes the policy file or the graph and restarts the server", version)}
	for _, o := range orphans {
		reasons = append(reasons, "orphan placement: "+o.String())
	}
	return LayerDecision{Decision: audit.VerdictDeny, Reasons: reasons, Detail: policyDetail{Edges: []grounding.Edge{}, Violations: []violation{}}}
}

// policyDetail is the edge-policy layer's detail: the edges it looked at
// and every policy that fired, confirmation-only ones included.
type policyDetail struct {
	Edges      []grounding.Edge `json:"applies_to_edges"`
	Violations []violation      `json:"violations"`
}

type violation struct {
	PolicyID             string `json:"policy_id"`
	Source               string `json:"source"`
	Target               string `json:"target"`
	SourceDepth          int    `json:"source_depth"`
	RequiresConfirmation bool   `json:"requires_confirmation"`
	Message              string `json:"message"`
	Reason               string `json:"reason"`
}

func violations(vs []edgepolicy.Violation) []violation {
	out := make([]violation, len(vs))
	for i, v := range vs {
		out[i] = violation(v)
	}
	return out
}
