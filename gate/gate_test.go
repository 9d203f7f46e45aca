package gate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// fixedLayer answers one verdict, or fails.
type fixedLayer struct {
	verdict audit.Verdict
	err     error
}

func (fixedLayer) Name() string         { return "fixed" }
func (fixedLayer) ActionKeys() []string { return nil }
func (l fixedLayer) Decide(context.Context, Input) (LayerDecision, error) {
	return LayerDecision{Decision: l.verdict}, l.err
}

// The approval layer judges only a decision that presents an approval;
// a failing layer refuses the call rather than being left out.
func TestGateJudge(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	first := LayerDecision{Layer: WarrantLayerName, Decision: audit.VerdictMayAct, Reasons: []string{}}
	g := Gate{Layers: []Layer{fixedLayer{verdict: audit.VerdictRequireConfirmation}}, Approvals: &Approvals{Log: approvalsOf{}}, Now: now}

	j, err := g.Judge(context.Background(), Input{}, first, &audit.Decision{})
	if err != nil || j.Decision != warrant.RequireConfirmation || len(j.Layers) != 2 || j.Layers[1].Layer != "fixed" || j.UsesOnce {
		t.Errorf("without an approval: %+v, %v", j, err)
	}
	j, err = g.Judge(context.Background(), Input{}, first, &audit.Decision{ApprovalID: "A-1"})
	if err != nil || j.Decision != warrant.RequireConfirmation || len(j.Layers) != 3 || j.Layers[2].Layer != ApprovalLayerName {
		t.Errorf("with an unknown approval: %+v, %v", j, err)
	}
	broken := errors.New("layer broke")
	g.Layers = []Layer{fixedLayer{err: broken}}
	if _, err := g.Judge(context.Background(), Input{}, first, nil); !errors.Is(err, broken) {
		t.Errorf("a failing layer: err %v, want the call refused", err)
	}
}
