package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

// MaxEvaluatedAtSkew is how far a caller's evaluated_at may be from the
// server clock in may_act. The gate always decides at the server clock;
// the tolerance only lets a client echo a time it read a moment ago.
const MaxEvaluatedAtSkew = 300 * time.Second

// GateLayer is one layer of the composed action gate (GROUNDING.md §0).
// The warrant layer is built in; others (grounding, edge policies) are
// added with WithGateLayer. A layer can only restrict: may_act returns the
// most restrictive decision of all layers.
type GateLayer interface {
	// Name is the layer's name in the result, e.g. "grounding".
	Name() string
	// ActionKeys are the action fields this layer reads beyond the EWP
	// ones (e.g. "concepts"). An action field no layer claims is refused,
	// so an action is never judged on less than it says.
	ActionKeys() []string
	// Decide judges the action. An error refuses the whole call (fail
	// closed); a *warrant.Error carries its code to the caller.
	// ErrNotApplicable leaves the layer out of the result.
	Decide(ctx context.Context, in GateInput) (LayerDecision, error)
}

// ErrNotApplicable is what a layer's Decide returns when the action says
// nothing the layer judges (e.g. no concepts): the layer is left out of the
// result, so an action without guard fields gets exactly the EWP answer.
var ErrNotApplicable = errors.New("mcp: gate layer not applicable to this action")

// Skipped is the decision reported for the warrant layer when the action
// names no proposition (a concepts-only action). It is not a verdict and
// never loosens the result: combine ignores it, and a call no layer judged
// is denied.
const Skipped = "SKIPPED"

// GateInput is what a layer sees.
type GateInput struct {
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

	guard *guardCall // the guard's share of the call; nil when it does not apply
}

// LayerDecision is one layer's verdict as it appears in may_act's result.
type LayerDecision struct {
	Layer    string   `json:"layer"`
	Decision string   `json:"decision"`
	Reasons  []string `json:"reasons"`
	// Detail is layer-specific (grounding gaps, violated policies).
	Detail any `json:"detail,omitempty"`
}

// restrictiveness orders decisions; anything unknown counts as DENY so a
// confused layer fails closed.
func restrictiveness(d string) int {
	switch d {
	case warrant.MayActDecision:
		return 0
	case warrant.RequireConfirmation:
		return 1
	}
	return 2
}

// combine returns the most restrictive decision of the layers. Skipped
// layers do not count, and a call no layer judged is denied.
func combine(layers []LayerDecision) string {
	out, judged := warrant.MayActDecision, false
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
		out = warrant.Deny
	}
	return out
}

const warrantLayer = "warrant"

// warrantDecision is the EWP layer: warrant.MayAct over the axes.
func warrantDecision(w warrant.Axes, a warrant.Action, p warrant.RiskPolicy) (LayerDecision, error) {
	d, err := warrant.MayAct(w, a, p)
	if err != nil {
		return LayerDecision{}, err
	}
	reasons := d.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	return LayerDecision{Layer: warrantLayer, Decision: d.Decision, Reasons: reasons}, nil
}

// actionKeys are the action fields the warrant layer reads.
var actionKeys = []string{"action_id", "kind", "risk", "reversible"}

// layerKeys lists every action field some layer understands.
func (s *Server) layerKeys() []string {
	keys := append([]string{}, actionKeys...)
	for _, l := range s.layers {
		keys = append(keys, l.ActionKeys()...)
	}
	return keys
}

// runLayers asks the extra layers after the warrant layer.
func (s *Server) runLayers(ctx context.Context, in GateInput, first LayerDecision) ([]LayerDecision, error) {
	out := []LayerDecision{first}
	for _, l := range s.layers {
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
