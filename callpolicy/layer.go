package callpolicy

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/cedar-policy/cedar-go"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/gate"
)

// LayerName is the layer's name in the gate's answer.
const LayerName = "call_policies"

// Entity types and the action of the Cedar request.
const (
	ToolType   = cedar.EntityType("Tool")
	ServerType = cedar.EntityType("Server")
)

// CallAction is the action of every call-policy request.
var CallAction = cedar.NewEntityUID("Action", "call")

// Layer is the call_policies gate layer over a loaded Set.
type Layer struct{ set *Set }

// NewLayer is the layer judging calls by set (which must not be nil).
func NewLayer(set *Set) *Layer { return &Layer{set: set} }

// Name is LayerName.
func (*Layer) Name() string { return LayerName }

// ActionKeys: the layer reads no action field (the call is in Input.Call).
func (*Layer) ActionKeys() []string { return nil }

// Fired is one policy that fired on a call, in the layer's detail.
type Fired struct {
	PolicyID             string `json:"policy_id"`
	RequiresConfirmation bool   `json:"requires_confirmation"`
	Message              string `json:"message"`
	// Reason is "matched", or why the policy could not be evaluated.
	Reason string `json:"reason"`
}

// Detail is the layer's detail in the answer and the record.
type Detail struct {
	Tool  string  `json:"tool"`
	Fired []Fired `json:"fired"`
}

const reasonMatched = "matched"

// Decide judges in.Call; gate.ErrNotApplicable without one.
func (l *Layer) Decide(_ context.Context, in gate.Input) (gate.LayerDecision, error) {
	if in.Call == nil {
		return gate.LayerDecision{}, gate.ErrNotApplicable
	}
	fired := l.set.evaluate(in)
	return decision(in.Call.Name, fired, l.set.Len()), nil
}

func decision(tool string, fired []Fired, n int) gate.LayerDecision {
	var hard, pending []string
	for _, f := range fired {
		if f.RequiresConfirmation {
			pending = append(pending, f.Message)
		} else {
			hard = append(hard, f.Message)
		}
	}
	d := gate.LayerDecision{Detail: Detail{Tool: tool, Fired: fired}}
	switch {
	case len(hard) > 0:
		d.Decision, d.Reasons = audit.VerdictDeny, hard
	case len(pending) > 0:
		d.Decision, d.Reasons = audit.VerdictRequireConfirmation, pending
	default:
		d.Decision = audit.VerdictMayAct
		d.Reasons = []string{fmt.Sprintf("none of the %d call policies forbids %s", n, tool)}
	}
	return d
}

// evaluate runs every policy once over the call, in file order, and
// returns those that fired (matched, or could not be evaluated).
func (s *Set) evaluate(in gate.Input) []Fired {
	input, inputErr := inputRecord(in.Call.Arguments)
	if inputErr != nil {
		fired := make([]Fired, 0, len(s.policies))
		for _, p := range s.policies {
			fired = append(fired, p.fired(in, inputErr.Error()))
		}
		return fired
	}
	ents := entities{principal: edgepolicy.NewPrincipal(in.Agent.Name, in.Agent.Groups), tool: toolEntity(in.Call.Name)}
	req := cedar.Request{
		Principal: ents.principal.UID,
		Action:    CallAction,
		Resource:  ents.tool.UID,
		Context: cedar.NewRecord(cedar.RecordMap{
			"input":      input,
			"tool":       cedar.String(in.Call.Name),
			"kind":       cedar.String(in.Action.Kind),
			"risk":       cedar.String(in.Action.Risk),
			"reversible": cedar.Boolean(in.Action.Reversible),
			"entrance":   cedar.String(in.Call.Entrance),
		}),
	}
	return s.authorize(in, ents, req)
}

// authorize asks Cedar once over the whole set; a panic inside the
// evaluator fires every policy (the gate must neither crash nor let the
// call through).
func (s *Set) authorize(in gate.Input, ents entities, req cedar.Request) (fired []Fired) {
	defer func() {
		if r := recover(); r != nil {
			fired = fired[:0]
			for _, p := range s.policies {
				fired = append(fired, p.fired(in, fmt.Sprintf("the evaluator panicked: %v", r)))
			}
		}
	}()
	_, diag := cedar.Authorize(s, ents, req)
	why := make(map[cedar.PolicyID]string, len(diag.Reasons)+len(diag.Errors))
	for _, r := range diag.Reasons {
		why[r.PolicyID] = ""
	}
	for _, e := range diag.Errors {
		why[e.PolicyID] = e.Message
	}
	for _, p := range s.policies {
		if msg, ok := why[cedar.PolicyID(p.id)]; ok {
			fired = append(fired, p.fired(in, msg))
		}
	}
	return fired
}

// fired describes p firing on the call; problem is "" for a match, or why
// p could not be evaluated.
func (p *policy) fired(in gate.Input, problem string) Fired {
	f := Fired{PolicyID: p.id, RequiresConfirmation: p.confirm != "", Reason: reasonMatched}
	agent := in.Agent.Name
	if agent == "" {
		agent = audit.Anonymous
	}
	f.Message = fmt.Sprintf("call policy %q forbids %s for agent %s", p.id, in.Call.Name, agent)
	if p.confirm != "" {
		f.Message = fmt.Sprintf("%s (call policy %q)", p.confirm, p.id)
	}
	if problem != "" {
		f.Reason = fmt.Sprintf("policy could not be evaluated (%s); firing conservatively", problem)
		f.Message += "\n" + f.Reason
	}
	return f
}

// All is cedar.PolicyIterator over the set, in file order.
func (s *Set) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for _, p := range s.policies {
			if !yield(cedar.PolicyID(p.id), p.cedar) {
				return
			}
		}
	}
}

// toolEntity is Tool::"SERVER/TOOL" with parent Server::"SERVER" (none
// when the name has no "/").
func toolEntity(name string) cedar.Entity {
	e := cedar.Entity{UID: cedar.NewEntityUID(ToolType, cedar.String(name))}
	if server, _, ok := strings.Cut(name, "/"); ok {
		e.Parents = cedar.NewEntityUIDSet(cedar.NewEntityUID(ServerType, cedar.String(server)))
	}
	return e
}

// entities are the principal and the tool, all a call policy can ask for.
type entities struct {
	principal edgepolicy.Principal
	tool      cedar.Entity
}

func (e entities) Get(uid cedar.EntityUID) (cedar.Entity, bool) {
	if uid == e.tool.UID {
		return e.tool, true
	}
	return e.principal.Get(uid)
}
