package gate

import (
	"context"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// Gate is the composed action gate past the warrant layer, which its
// entrance runs over its own store: the configured layers (grounding,
// edge policies), then the approval layer.
type Gate struct {
	Layers []Layer
	// Approvals judges an approval the call presents; nil when the gate
	// keeps no decision log (its entrance then refuses an approval_id
	// before the gate is asked).
	Approvals *Approvals
	// Now is the gate's clock.
	Now func() time.Time
}

// Judgement is the gate's decision over every layer.
type Judgement struct {
	Layers   []LayerDecision
	Decision warrant.Verdict
	// UsesOnce: a single-use approval lifted the decision; it must be
	// recorded together with the approval's use (audit.Log.RecordUse).
	UsesOnce bool
}

// Judge asks every layer after first (the warrant layer's verdict, or
// SkippedWarrant) and combines them; when d, the decision being made,
// presents an approval, the approval layer then judges it against the
// combined decision. An error refuses the whole call (fail closed).
func (g Gate) Judge(ctx context.Context, in Input, first LayerDecision, d *audit.Decision) (Judgement, error) {
	layers, err := RunLayers(ctx, g.Layers, in, first)
	if err != nil {
		return Judgement{}, err
	}
	base := Combine(layers)
	if d == nil || d.ApprovalID == "" || g.Approvals == nil {
		return Judgement{Layers: layers, Decision: base}, nil
	}
	l, once, err := g.Approvals.Judge(ctx, d, base, g.Now())
	if err != nil {
		return Judgement{}, err
	}
	return Judgement{Layers: append(layers, l), Decision: warrant.Verdict(l.Decision), UsesOnce: once}, nil
}
