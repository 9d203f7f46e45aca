package grounding

import "slices"

// subgraph is what a backend's resolve_subgraph hands the engine (spec
// §2.2): the transitive closure of the anchors, the roots among them, and
// every stored relatum between closure nodes. Edges name their ends by id,
// as a backend would, so the engine can verify integrity (§2.4) instead of
// trusting the traversal.
type subgraph struct {
	nodes []*gnode // graph insertion order
	roots []*gnode // closure nodes whose fold key was requested
	edges []subEdge
}

type subEdge struct {
	src, dst string // primitive ids
	typ      RelationType
	sd, td   DepthLevel
}

// resolveSubgraph computes the closure over transitive relata at any depth
// and collects edges of all five types between closure nodes, in graph
// order (source insertion order, then depth, then stored relatum order).
func (g *Graph) resolveSubgraph(folds map[string]bool) subgraph {
	in := make([]bool, len(g.nodes))
	var reach []int
	for f := range folds {
		if i, ok := g.byFold[f]; ok && !in[i] {
			in[i] = true
			reach = append(reach, i)
		}
	}
	for k := 0; k < len(reach); k++ {
		for _, e := range g.nodes[reach[k]].out {
			if e.typ.Transitive() && !in[e.target] {
				in[e.target] = true
				reach = append(reach, e.target)
			}
		}
	}
	slices.Sort(reach)
	var sub subgraph
	for _, i := range reach {
		n := &g.nodes[i]
		sub.nodes = append(sub.nodes, n)
		if folds[n.fold] {
			sub.roots = append(sub.roots, n)
		}
		for _, e := range n.out {
			if in[e.target] {
				sub.edges = append(sub.edges, subEdge{n.prim.ID, g.nodes[e.target].prim.ID, e.typ, e.sd, e.td})
			}
		}
	}
	return sub
}
