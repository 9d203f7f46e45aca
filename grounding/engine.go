package grounding

import "github.com/google/uuid"

// engine holds one Check's working state; local indices are positions in
// nodes, which is all_nodes of spec §2.3 (closure in graph order, then
// transients in input order).
type engine struct {
	nodes    []enode
	edges    []eedge
	roots    []int  // de-duplicated input order, transients included
	frontier []bool // justified frontier membership (§2.6)
	visible  []int  // frontier_visible, edge indices in edge order
	gated    []int  // frontier_gated, edge indices in edge order
}

// ground is the engine proper (spec §2.3–§2.8) over a backend subgraph.
func ground(sub subgraph, concepts, folds []string, minDepth *int) (Result, error) {
	e := &engine{}
	e.identifyRoots(sub, concepts, folds)
	if err := e.linkEdges(sub); err != nil {
		return Result{}, err
	}
	e.computeFrontier()
	gaps := e.existenceGaps()
	gaps = append(gaps, e.depthGaps(minDepth)...)
	gaps = append(gaps, e.relationalGaps()...)
	gaps = append(gaps, e.reachabilityGaps()...)
	return e.result(concepts, folds, gaps), nil
}

// identifyRoots walks the input in order, de-duplicating by fold key (the
// first spelling wins, #130); an unknown name becomes a transient root.
func (e *engine) identifyRoots(sub subgraph, concepts, folds []string) {
	isRoot := make(map[string]bool, len(sub.roots))
	for _, r := range sub.roots {
		isRoot[r.fold] = true
	}
	rootAt := make(map[string]int, len(sub.roots))
	e.nodes = make([]enode, 0, len(sub.nodes)+len(concepts))
	for _, n := range sub.nodes {
		if isRoot[n.fold] {
			rootAt[n.fold] = len(e.nodes)
		}
		e.nodes = append(e.nodes, enode{id: n.prim.ID, name: n.prim.Name, fold: n.fold, prim: &n.prim, mask: n.mask, cmax: n.cmax})
	}
	seen := make(map[string]bool, len(concepts))
	for i, c := range concepts {
		f := folds[i]
		if seen[f] {
			continue
		}
		seen[f] = true
		if at, ok := rootAt[f]; ok {
			e.roots = append(e.roots, at)
			continue
		}
		e.roots = append(e.roots, len(e.nodes))
		e.nodes = append(e.nodes, transientNode(c, f))
	}
}

// transientNode is the synthetic placeholder for a concept absent from the
// graph: input spelling, no depths, id stable per folded name.
func transientNode(name, fold string) enode {
	id := uuid.NewSHA1(transientNamespace, []byte(fold)).String()
	return enode{id: id, name: name, fold: fold, cmax: -1}
}

// linkEdges resolves edge ends against all_nodes and fails loudly on an
// edge the traversal should never have produced (spec §2.4).
func (e *engine) linkEdges(sub subgraph) error {
	at := make(map[string]int, len(e.nodes))
	for i := range e.nodes {
		at[e.nodes[i].id] = i
	}
	e.edges = make([]eedge, 0, len(sub.edges))
	for _, s := range sub.edges {
		src, ok := at[s.src]
		if !ok {
			return &GraphIntegrityError{SourceID: s.src, TargetID: s.dst, Missing: s.src}
		}
		dst, ok := at[s.dst]
		if !ok {
			return &GraphIntegrityError{SourceID: s.src, TargetID: s.dst, Missing: s.dst}
		}
		e.edges = append(e.edges, eedge{src, dst, s.typ, s.sd, s.td})
	}
	return nil
}

// computeFrontier is the directed closure of the roots over visible edges
// of every type (#94); nodes reached only through gated edges, or only
// upstream of the roots, fall out.
func (e *engine) computeFrontier() {
	out := make([][]int, len(e.nodes))
	for i, ed := range e.edges {
		if ed.visible(e.nodes) {
			out[ed.src] = append(out[ed.src], i)
		}
	}
	e.frontier = make([]bool, len(e.nodes))
	queue := make([]int, 0, len(e.nodes))
	for _, r := range e.roots {
		if !e.frontier[r] {
			e.frontier[r] = true
			queue = append(queue, r)
		}
	}
	for k := 0; k < len(queue); k++ {
		for _, ei := range out[queue[k]] {
			if t := e.edges[ei].dst; !e.frontier[t] {
				e.frontier[t] = true
				queue = append(queue, t)
			}
		}
	}
	for i, ed := range e.edges {
		switch {
		case !e.frontier[ed.src]:
		case ed.visible(e.nodes):
			e.visible = append(e.visible, i)
		default:
			e.gated = append(e.gated, i)
		}
	}
}
