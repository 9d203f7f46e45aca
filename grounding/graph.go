package grounding

import (
	"slices"
	"strings"
)

// Graph is an immutable, indexed snapshot of the current concept graph: the
// latest revision of each primitive, in order of first insertion. That
// order is the engine's edge order (spec §2.9), so results are
// deterministic. A Graph is safe for concurrent use.
type Graph struct {
	nodes  []gnode
	byID   map[string]int
	byFold map[string]int
}

// gnode is a primitive with everything Check needs precomputed.
type gnode struct {
	prim Primitive
	fold string
	mask uint8 // grounding levels (vacuity rule applied)
	cmax int   // contiguous max depth, -1 for none
	out  []gedge
}

// gedge is one stored relatum with its target resolved to a node index;
// depth and rel locate it inside the primitive for error messages.
type gedge struct {
	target     int
	typ        RelationType
	sd, td     DepthLevel
	depth, rel int
}

// NewGraph builds a snapshot from revisions, for example the ledger's rows
// in ledger order. A later revision of an id supersedes an earlier one and
// keeps its position, so replaying history gives the same order as the
// original inserts. Only the resulting graph is validated.
func NewGraph(prims []Primitive) (*Graph, error) {
	return (&Graph{}).Apply(prims)
}

// Len is the number of primitives.
func (g *Graph) Len() int { return len(g.nodes) }

// ByName finds a primitive by folded name (exact after folding, nothing
// fuzzier; spec §1.7). The result is a copy.
func (g *Graph) ByName(name string) (Primitive, bool) {
	i, ok := g.byFold[Fold(name)]
	if !ok {
		return Primitive{}, false
	}
	return g.nodes[i].prim.Clone(), true
}

// ByID finds a primitive by id. The result is a copy.
func (g *Graph) ByID(id string) (Primitive, bool) {
	i, ok := g.byID[id]
	if !ok {
		return Primitive{}, false
	}
	return g.nodes[i].prim.Clone(), true
}

// Names lists the stored names sorted case-insensitively (by fold key,
// which is unique, so the order is total).
func (g *Graph) Names() []string {
	idx := make([]int, len(g.nodes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(g.nodes[a].fold, g.nodes[b].fold) })
	out := make([]string, len(idx))
	for i, n := range idx {
		out[i] = g.nodes[n].prim.Name
	}
	return out
}

// Primitives returns copies of all primitives in insertion order.
func (g *Graph) Primitives() []Primitive {
	out := make([]Primitive, len(g.nodes))
	for i := range g.nodes {
		out[i] = g.nodes[i].prim.Clone()
	}
	return out
}

// HasAppliesTo reports whether source holds an APPLIES_TO relatum to target
// on the depth whose level is exactly sourceDepth. Edge-policy placement
// validation uses it to find orphan placements (spec §3.2).
func (g *Graph) HasAppliesTo(source, target string, sourceDepth int) bool {
	s, ok := g.byFold[Fold(source)]
	if !ok {
		return false
	}
	t, ok := g.byFold[Fold(target)]
	if !ok {
		return false
	}
	for _, e := range g.nodes[s].out {
		if e.typ == AppliesTo && e.target == t && int(e.sd) == sourceDepth {
			return true
		}
	}
	return false
}
