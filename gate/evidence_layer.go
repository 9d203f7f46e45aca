package gate

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// EvidenceLayerName is the evidence layer's name in the result.
const EvidenceLayerName = "evidence"

// ReasonNoEvidence is the evidence layer's reason for holding a call.
const ReasonNoEvidence = "no_evidence"

// EvidenceLayer judges a forwarded tool call (Input.Call) by whether it
// rests on evidence: a high-risk or irreversible call that relies on no
// proposition is at least REQUIRE_CONFIRMATION, so a manifest rule that
// names no proposition for such a call cannot let it through unasked.
// Anything else it lets through; the warrant layer judges the evidence
// itself. It does not apply to may_act (no Call).
type EvidenceLayer struct{}

// Name is "evidence".
func (EvidenceLayer) Name() string { return EvidenceLayerName }

// ActionKeys: the layer reads only the EWP fields.
func (EvidenceLayer) ActionKeys() []string { return nil }

// Decide holds a high-risk or irreversible call without evidence.
func (EvidenceLayer) Decide(_ context.Context, in Input) (LayerDecision, error) {
	if in.Call == nil {
		return LayerDecision{}, ErrNotApplicable
	}
	n := len(in.Propositions)
	if n == 0 && in.PropositionID != "" {
		n = 1
	}
	risky := in.Action.Risk == "high" || !in.Action.Reversible
	switch {
	case n > 0:
		return LayerDecision{Decision: audit.VerdictMayAct, Reasons: []string{
			"the call relies on " + strconv.Itoa(n) + " stored proposition(s), which the warrant layer judged"}}, nil
	case risky:
		return LayerDecision{Decision: audit.VerdictRequireConfirmation, Reasons: []string{
			ReasonNoEvidence + ": " + in.Call.Name + " is a " + riskWord(in.Action) + " call that relies on no stored proposition, " +
				"so it needs confirmation; the operator's manifest can name the propositions it rests on"}}, nil
	}
	return LayerDecision{Decision: audit.VerdictMayAct, Reasons: []string{
		"a " + riskWord(in.Action) + " call relies on no stored proposition, which its risk allows"}}, nil
}

func riskWord(a warrant.Action) string {
	if a.Reversible {
		return a.Risk + "-risk reversible"
	}
	return a.Risk + "-risk irreversible"
}

// onceApproval looks up the single-use approval the operator gave for
// this very call (same agent, tool and arguments; audit.OnceApprovals),
// the call having presented none, and judges it as if presented: the
// record then uses it (RecordUse), so it lets the call through once.
func (g *Gate) onceApproval(ctx context.Context, r *Request, dr *draft, j Judgement, now time.Time) (Judgement, error) {
	finder, ok := g.st.cfg.Log.(audit.OnceApprovals)
	if !ok || g.Approvals == nil {
		return j, nil
	}
	agent := r.Agent.Name
	if agent == "" {
		agent = audit.Anonymous
	}
	ap, err := finder.OnceApprovalFor(ctx, agent, r.Call.Name, dr.d.ArgumentsHash, now)
	if errors.Is(err, audit.ErrNotFound) {
		return j, nil
	}
	if err != nil {
		return Judgement{}, err
	}
	dr.update(func(dr *draft) { dr.d.ApprovalID = ap.ID })
	l, once, err := g.Approvals.Judge(ctx, &dr.d, j.Decision, now)
	if err != nil {
		return Judgement{}, err
	}
	return Judgement{Layers: append(j.Layers, l), Decision: warrant.Verdict(l.Decision), UsesOnce: once}, nil
}
