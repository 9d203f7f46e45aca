package gate

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// MaxEvaluatedAtSkew is how far a caller's evaluated_at may be from the
// server clock. The gate always decides at the server clock; the
// tolerance only lets a client echo a time it read a moment ago.
const MaxEvaluatedAtSkew = 300 * time.Second

// Layer is one layer of the composed action gate (GROUNDING.md §0). The
// warrant layer is built in; others (grounding, edge policies) are added
// by the entrance that configures the gate. A layer can only restrict: the
// gate's decision is the most restrictive of all layers.
type Layer interface {
	// Name is the layer's name in the result, e.g. "grounding".
	Name() string
	// ActionKeys are the action fields this layer reads beyond the EWP
	// ones (e.g. "concepts"). An action field no layer claims is refused,
	// so an action is never judged on less than it says.
	ActionKeys() []string
	// Decide judges the action. An error refuses the whole call (fail
	// closed); a *warrant.Error carries its code to the caller.
	// ErrNotApplicable leaves the layer out of the result.
	Decide(ctx context.Context, in Input) (LayerDecision, error)
}

// ErrNotApplicable is what a layer's Decide returns when the action says
// nothing the layer judges (e.g. no concepts): the layer is left out of the
// result, so an action without guard fields gets exactly the EWP answer.
var ErrNotApplicable = errors.New("gate: layer not applicable to this action")

// Skipped is the decision reported for the warrant layer when the action
// names no proposition (a concepts-only action). It is not a verdict and
// never loosens the result: Combine ignores it, and a call no layer judged
// is denied.
const Skipped = audit.VerdictSkipped

// Input is what a layer sees.
type Input struct {
	// PropositionID is "" when the action relies on no proposition (the
	// warrant layer was skipped; Warrant is then empty).
	PropositionID string
	Action        warrant.Action
	// ActionFields is the action object exactly as sent, for the keys a
	// layer claims.
	ActionFields map[string]json.RawMessage
	// Warrant is the WarrantView of the latest snapshot at the server clock.
	Warrant warrant.WarrantView
	// Ingest is whether the caller holds the ingest role.
	Ingest bool
	// Guard is the guard's share of the call; nil when it does not apply.
	Guard *GuardCall
	// Agent is who asks (Request.Agent).
	Agent audit.Principal
	// Propositions are every proposition the warrant layer judged, the
	// first being PropositionID; nil when it was skipped.
	Propositions []string
	// Call is the forwarded tool call; nil for a may_act call.
	Call *ToolCall
}

// LayerDecision is one layer's verdict as it appears in the gate's answer
// (and, converted, in the record: audit.Layer has the same fields).
type LayerDecision struct {
	Layer    string        `json:"layer"`
	Decision audit.Verdict `json:"decision"`
	Reasons  []string      `json:"reasons"`
	// Detail is layer-specific (grounding gaps, violated policies).
	Detail any `json:"detail,omitempty"`
}

// restrictiveness orders decisions; anything unknown counts as DENY so a
// confused layer fails closed.
func restrictiveness(d audit.Verdict) int {
	switch d {
	case audit.VerdictMayAct:
		return 0
	case audit.VerdictRequireConfirmation:
		return 1
	}
	return 2
}

// Combine returns the most restrictive decision of the layers. Skipped
// layers do not count, and a call no layer judged is denied.
func Combine(layers []LayerDecision) warrant.Verdict {
	out, judged := audit.VerdictMayAct, false
	for _, l := range layers {
		if l.Decision == Skipped {
			continue
		}
		judged = true
		if restrictiveness(l.Decision) > restrictiveness(out) {
			out = l.Decision
		}
	}
	if !judged || restrictiveness(out) == 2 {
		return warrant.Deny
	}
	return warrant.Verdict(out)
}

// WarrantLayerName is the warrant layer's name in the result.
const WarrantLayerName = "warrant"

// WarrantDecision is the EWP layer: warrant.MayAct over the axes.
func WarrantDecision(w warrant.Axes, a warrant.Action, p warrant.RiskPolicy) (LayerDecision, error) {
	d, err := warrant.MayAct(w, a, p)
	if err != nil {
		return LayerDecision{}, err
	}
	reasons := d.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	return LayerDecision{Layer: WarrantLayerName, Decision: audit.Verdict(d.Decision), Reasons: reasons}, nil
}

// SkippedWarrant is the warrant layer of an action that names no
// proposition: reported, never a verdict.
func SkippedWarrant() LayerDecision {
	return LayerDecision{Layer: WarrantLayerName, Decision: Skipped, Reasons: []string{
		"no proposition_id: the action relies on no stored evidence, so the warrant layer did not run; the guard layers alone judged it"}}
}

// WarrantActionKeys are the action fields the warrant layer reads.
var WarrantActionKeys = []string{"action_id", "kind", "risk", "reversible"}

// ActionKeys lists every action field the warrant layer or one of layers
// understands.
func ActionKeys(layers []Layer) []string {
	keys := append([]string{}, WarrantActionKeys...)
	for _, l := range layers {
		keys = append(keys, l.ActionKeys()...)
	}
	return keys
}

// RunLayers asks layers after the warrant layer's decision first.
func RunLayers(ctx context.Context, layers []Layer, in Input, first LayerDecision) ([]LayerDecision, error) {
	return runLayers(ctx, layers, in, []LayerDecision{first})
}

// runLayers asks layers after the decisions out already holds.
func runLayers(ctx context.Context, layers []Layer, in Input, out []LayerDecision) ([]LayerDecision, error) {
	for _, l := range layers {
		d, err := l.Decide(ctx, in)
		if errors.Is(err, ErrNotApplicable) {
			continue
		}
		if err != nil {
			return nil, err
		}
		d.Layer = l.Name()
		if d.Reasons == nil {
			d.Reasons = []string{}
		}
		out = append(out, d)
	}
	return out, nil
}
