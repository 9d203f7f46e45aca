package gate

import (
	"context"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/grounding"
)

// GroundRequest is a check_grounding call: are concepts grounded in the
// operator's concept graph (each at least MinDepth deep, when set)?
type GroundRequest struct {
	Concepts []string
	MinDepth *int
	Agent    audit.Principal
	Caller   audit.Caller
	// Done is as Request.Done.
	Done func()
}

// Grounded is Ground's answer: the check's result, the graph version it
// ran on and the decision_id it was recorded under ("" without a log).
type Grounded struct {
	grounding.Result
	GraphVersion int64  `json:"graph_version"`
	DecisionID   string `json:"decision_id,omitempty"`
}

// errNoGuard refuses Ground on a gate without a grounding guard.
var errNoGuard = refusal(CodeInvalidArgument, "concepts", "this gate has no concept graph, so nothing can be checked for grounding")

// Ground checks r's concepts against the guard's concept graph and
// records the answer (audit.ToolCheckGrounding) before answering it.
func (g *Gate) Ground(ctx context.Context, r GroundRequest) (Grounded, error) {
	if g.st == nil {
		runDone(r.Done)
		return Grounded{}, errNotNew
	}
	ctx, cancel := g.deadline(ctx)
	defer cancel()
	dr := g.begin(ctx, audit.ToolCheckGrounding, &Request{Agent: r.Agent, Caller: r.Caller})
	ectx, ecancel := g.evalContext(ctx, dr)
	defer ecancel()
	start := time.Now()
	out, err := bounded(g, ectx, dr, r.Done, &r, (*Gate).ground)
	if err != nil {
		if _, ok := err.(*PanicError); ok {
			return Grounded{}, err
		}
		err = g.timedOut(ectx, err, start)
	}
	return g.finishGround(ctx, dr, out, err)
}

func (g *Gate) ground(ctx context.Context, r *GroundRequest, _ *draft) (*Grounded, error) {
	gd := g.st.cfg.Guard
	if gd == nil {
		return nil, errNoGuard
	}
	graph, v, err := gd.Source().Graph(ctx)
	if err != nil {
		return nil, err
	}
	res, err := graph.Check(r.Concepts, r.MinDepth)
	if err != nil {
		return nil, err // min_depth is checked by the entrance: only a graph integrity failure is left
	}
	return &Grounded{Result: res, GraphVersion: v}, nil
}

// finishGround records a check_grounding call as finish records may_act.
func (g *Gate) finishGround(ctx context.Context, dr *draft, out *Grounded, err error) (Grounded, error) {
	if dr == nil {
		if err != nil {
			return Grounded{}, err
		}
		return *out, nil
	}
	if err == nil {
		fillGround(dr, out)
	}
	if _, err := g.commit(ctx, dr, nil, err); err != nil {
		return Grounded{}, err
	}
	out.DecisionID = dr.d.ID
	return *out, nil
}

// fillGround completes the decision from the check's answer: the concepts
// as the graph names them (as sent when unknown), and the grounding layer.
func fillGround(dr *draft, o *Grounded) {
	dr.d.Outcome, dr.d.GraphVersion, dr.d.Concepts = audit.OutcomeAnswered, o.GraphVersion, o.Resolved
	l := audit.Layer{Layer: GroundingLayerName, Decision: "GROUNDED", Reasons: []string{},
		Detail: GroundingDetail{Grounded: o.Grounded, Resolved: o.Resolved, Gaps: o.Gaps, GraphVersion: o.GraphVersion}}
	if !o.Grounded {
		l.Decision = "NOT_GROUNDED"
		for _, gap := range o.Gaps {
			l.Reasons = append(l.Reasons, gap.Message)
		}
	}
	dr.d.Layers = []audit.Layer{l}
}
