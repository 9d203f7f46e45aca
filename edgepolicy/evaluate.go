package edgepolicy

import (
	"errors"
	"fmt"
	"iter"

	"github.com/cedar-policy/cedar-go"
)

// Edge is one APPLIES_TO step of a grounded trace.
type Edge struct {
	Source, Target           string
	SourceDepth, TargetDepth int
}

// Request describes the action being gated.
type Request struct {
	AgentID     string         // "" means "anonymous"
	AgentGroups []string       // the agent's groups: parents Group::"G" of the principal
	ToolName    string         // "" makes every fired policy unevaluable
	Cardinality string         // "single", "multiple"; anything else is unknown
	Arguments   map[string]any // JSON-decoded tool arguments
}

// Violation is one policy that fired on one edge.
type Violation struct {
	PolicyID             string
	Source               string // edge names as the trace gave them
	Target               string
	SourceDepth          int
	RequiresConfirmation bool
	// Message is what a human is shown: the @confirm text, or a hard-block
	// message naming the policy. When the policy could not be evaluated the
	// reason is appended on a second line, so nobody confirms "protected
	// file" without learning that the check itself did not run.
	Message string
	// Reason says why the policy fired: its condition matched, or it could
	// not be evaluated and fired fail-closed.
	Reason string
}

const (
	defaultAgent   = "anonymous"
	reasonMatched  = "forbid policy matched the request"
	actionType     = cedar.EntityType("Action")
	conceptType    = cedar.EntityType("Concept")
	unevaluableFmt = "policy could not be evaluated (%s); firing conservatively"
)

var errNoToolName = errors.New("no tool name in the request")

// firing is a placement selected by an edge of the trace.
type firing struct {
	p    *policy
	edge Edge
}

// requestParts are the parts of the Cedar request shared by every policy
// evaluated for one call; err, when set, makes every policy unevaluable.
type requestParts struct {
	principal   Principal
	action      cedar.EntityUID
	arguments   cedar.Record
	cardinality string
	err         error
}

// Evaluate runs, for each edge in trace order, each policy placed on it
// (folded names, exact source depth) in file order, and returns the
// violations. An edge that appears twice is evaluated once. Each policy is
// evaluated alone, so one policy's error cannot mask another's result.
func (s *Set) Evaluate(edges []Edge, req Request) []Violation {
	if s == nil || len(s.policies) == 0 {
		return nil
	}
	card := normalizeCardinality(req.Cardinality)
	fired := s.placements(edges, card)
	if len(fired) == 0 {
		return nil
	}
	parts := newRequestParts(req, card)
	var out []Violation
	for _, f := range fired {
		if v, ok := judge(f, parts); ok {
			out = append(out, v)
		}
	}
	return out
}

// normalizeCardinality maps anything but the two known values to "unknown",
// which fires every placement: not knowing how many things an action touches
// must not let it past a policy meant for the larger case.
func normalizeCardinality(c string) string {
	if c == CardinalitySingle || c == CardinalityMultiple {
		return c
	}
	return ""
}

func (s *Set) placements(edges []Edge, card string) []firing {
	var out []firing
	seen := make(map[edgeKey]bool, len(edges))
	for _, e := range edges {
		k := edgeKey{fold(e.Source), fold(e.Target), e.SourceDepth}
		if seen[k] {
			continue
		}
		seen[k] = true
		for _, p := range s.byEdge[k] {
			if card != "" && p.cardinality != "" && p.cardinality != card {
				continue
			}
			out = append(out, firing{p, e})
		}
	}
	return out
}

func newRequestParts(req Request, card string) requestParts {
	parts := requestParts{
		principal:   NewPrincipal(req.AgentID, req.AgentGroups),
		action:      cedar.NewEntityUID(actionType, cedar.String(req.ToolName)),
		cardinality: card,
	}
	if req.ToolName == "" {
		parts.err = errNoToolName
		return parts
	}
	args, err := argumentsRecord(req.Arguments)
	if err != nil {
		parts.err = fmt.Errorf("argument cannot be given to Cedar: %w", err)
	}
	parts.arguments = args
	return parts
}

// judge evaluates one firing; ok is false when the policy did not fire.
func judge(f firing, parts requestParts) (v Violation, ok bool) {
	err := parts.err
	if err == nil {
		var matched bool
		matched, err = f.p.matches(parts)
		if err == nil && !matched {
			return Violation{}, false
		}
	}
	v = Violation{PolicyID: f.p.id, Source: f.edge.Source, Target: f.edge.Target,
		SourceDepth: f.edge.SourceDepth, RequiresConfirmation: f.p.confirm != ""}
	v.Message, v.Reason = f.p.message(f.edge), reasonMatched
	if err != nil {
		v.Reason = fmt.Sprintf(unevaluableFmt, err)
		v.Message += "\n" + v.Reason
	}
	return v, true
}

func (p *policy) message(e Edge) string {
	if p.confirm != "" {
		return p.confirm
	}
	return fmt.Sprintf("Blocked by policy %q on %s->%s @ %s.", p.id, e.Source, e.Target, DepthLabel(e.SourceDepth))
}

// matches evaluates this policy alone. The resource and the context's
// source/target use the policy's own spelling of the names (they fold-equal
// the trace's, or the placement would not have been selected), so a scope
// such as `resource == Concept::"file"` written next to @target("file")
// always agrees with the placement. A panic inside the evaluator is turned
// into an error: the gate must neither crash the server nor let the action
// through.
func (p *policy) matches(parts requestParts) (matched bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			matched, err = false, fmt.Errorf("evaluator panicked: %v", r)
		}
	}()
	req := cedar.Request{
		Principal: parts.principal.UID,
		Action:    parts.action,
		Resource:  cedar.NewEntityUID(conceptType, cedar.String(p.target)),
		Context:   p.context(parts),
	}
	_, diag := cedar.Authorize(onePolicy{p.id, p.cedar}, parts.principal, req)
	if len(diag.Errors) > 0 {
		return false, errors.New(diag.Errors[0].Message)
	}
	return len(diag.Reasons) > 0, nil
}

// context omits cardinality when it is unknown, so a condition that reads it
// cannot mistake "unknown" for a value and fails closed instead.
func (p *policy) context(parts requestParts) cedar.Record {
	rm := cedar.RecordMap{
		"source":       cedar.String(p.source),
		"target":       cedar.String(p.target),
		"source_depth": cedar.Long(p.depth),
		"arguments":    parts.arguments,
	}
	if parts.cardinality != "" {
		rm["cardinality"] = cedar.String(parts.cardinality)
	}
	return cedar.NewRecord(rm)
}

// onePolicy lets cedar.Authorize see a single policy without building a
// PolicySet (a map) per evaluation.
type onePolicy struct {
	id string
	p  *cedar.Policy
}

func (o onePolicy) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		yield(cedar.PolicyID(o.id), o.p)
	}
}
