package grounding

import (
	"fmt"

	"github.com/google/uuid"
)

// transientNamespace seeds the ids of transient placeholders, so an
// unknown concept gets the same id on every call (no randomness in output).
var transientNamespace = uuid.MustParse("eea43b98-d9d4-472a-bb5c-5176fb6ec57b")

// enode is a node as the engine sees it: a stored primitive or a transient
// placeholder for an unknown concept.
type enode struct {
	id, name, fold string
	prim           *Primitive // nil for a transient
	mask           uint8
	cmax           int // -1 for none
}

func (n *enode) transient() bool { return n.prim == nil }

// eedge is a subgraph edge with its ends resolved to engine node indices.
type eedge struct {
	src, dst int
	typ      RelationType
	sd, td   DepthLevel
}

// visible: the agent can see an edge only when its source is contiguously
// grounded at least to the edge's source depth (spec §2.5).
func (e eedge) visible(nodes []enode) bool {
	c := nodes[e.src].cmax
	return c >= 0 && c >= int(e.sd)
}

// Check grounds concepts against g (spec §2): it returns grounded,
// resolved, the gaps in phase order and the trace. minDepth, when given,
// must be in 0..4 and applies to known roots only. The error is non-nil
// only for an invalid minDepth or a *GraphIntegrityError.
func (g *Graph) Check(concepts []string, minDepth *int) (Result, error) {
	if minDepth != nil && !DepthLevel(*minDepth).Valid() {
		return Result{}, fmt.Errorf("min_depth %d is outside 0..4", *minDepth)
	}
	if len(concepts) == 0 {
		return emptyResult(), nil
	}
	folds := make([]string, len(concepts))
	want := make(map[string]bool, len(concepts))
	for i, c := range concepts {
		folds[i] = Fold(c)
		want[folds[i]] = true
	}
	return ground(g.resolveSubgraph(want), concepts, folds, minDepth)
}
