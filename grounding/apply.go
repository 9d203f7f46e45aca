package grounding

import (
	"fmt"
	"maps"
)

// Apply returns a new graph in which revisions replace the primitives with
// the same id, or are appended when the id is new. The receiver is left
// untouched. The result is validated as a whole: ids are UUIDs, names are
// non-empty and unique after folding, depths are listed in strictly
// ascending level within 0..4, relation types and target depths are valid,
// provenance is present everywhere, every relatum target exists, and no
// transitive relatum refers to its own primitive or closes a cycle
// (APPLIES_TO and INCLUDES are exempt). Errors are *GraphError with Path
// "[i]..." indexing revisions.
func (g *Graph) Apply(revisions []Primitive) (*Graph, error) {
	ng, err := g.apply(revisions)
	if err != nil {
		err.Path = fmt.Sprintf("[%d]%s", err.rev, err.Path)
		return nil, err
	}
	return ng, nil
}

// apply is Apply with errors whose Path is relative to revision err.rev, so
// the document layer can re-root them at "primitives[i]".
func (g *Graph) apply(revisions []Primitive) (*Graph, *GraphError) {
	for i := range revisions {
		if err := checkRevision(revisions[i]); err != nil {
			err.rev = i
			return nil, err
		}
	}
	ng, revised, batch := g.merge(revisions)
	if err := ng.index(revised, batch); err != nil {
		return nil, err
	}
	if err := ng.link(revised, batch); err != nil {
		return nil, err
	}
	if err := ng.checkCycles(revised, batch); err != nil {
		return nil, err
	}
	return ng, nil
}

// merge copies g and lays the revisions over it. revised lists the touched
// node indices in batch order; batch maps a node index to the position of
// its (last) revision, for error paths.
func (g *Graph) merge(revisions []Primitive) (*Graph, []int, map[int]int) {
	ng := &Graph{
		nodes: make([]gnode, len(g.nodes), len(g.nodes)+len(revisions)),
		byID:  maps.Clone(g.byID),
	}
	if ng.byID == nil {
		ng.byID = make(map[string]int, len(revisions))
	}
	copy(ng.nodes, g.nodes)
	batch := make(map[int]int, len(revisions))
	var revised []int
	for i, p := range revisions {
		idx, ok := ng.byID[p.ID]
		if !ok {
			idx = len(ng.nodes)
			ng.nodes = append(ng.nodes, gnode{})
			ng.byID[p.ID] = idx
		}
		if _, seen := batch[idx]; !seen {
			revised = append(revised, idx)
		}
		batch[idx] = i
		p = p.Clone()
		ng.nodes[idx] = gnode{prim: p, fold: Fold(p.Name), mask: p.groundingMask()}
		ng.nodes[idx].cmax = contiguousMax(ng.nodes[idx].mask)
	}
	return ng, revised, batch
}

// index rebuilds the fold index; a clash is reported on the revised side.
func (ng *Graph) index(revised []int, batch map[int]int) *GraphError {
	ng.byFold = make(map[string]int, len(ng.nodes))
	for i := range ng.nodes {
		if _, inBatch := batch[i]; !inBatch {
			ng.byFold[ng.nodes[i].fold] = i
		}
	}
	for _, i := range revised {
		n := &ng.nodes[i]
		if other, taken := ng.byFold[n.fold]; taken {
			return &GraphError{
				rev: batch[i], Path: ".name", Primitive: n.prim.Name, Depth: -1, Rule: RuleDuplicateName,
				Detail: fmt.Sprintf("name folds to %q, already used by primitive %q", n.fold, ng.nodes[other].prim.Name),
			}
		}
		ng.byFold[n.fold] = i
	}
	return nil
}

// link resolves the relata of revised nodes to node indices.
func (ng *Graph) link(revised []int, batch map[int]int) *GraphError {
	for _, i := range revised {
		n := &ng.nodes[i]
		n.out = nil
		for di, d := range n.prim.Depths {
			for ri, r := range d.Relata {
				t, ok := ng.byID[r.TargetID]
				if !ok {
					return &GraphError{
						rev: batch[i], Path: fmt.Sprintf(".depths[%d].relata[%d]", di, ri),
						Primitive: n.prim.Name, Depth: int(d.Level), Rule: RuleUnknownTarget,
						Detail: fmt.Sprintf("%s relatum targets id %s, which is not in the graph", r.RelationType, r.TargetID),
					}
				}
				n.out = append(n.out, gedge{target: t, typ: r.RelationType, sd: d.Level, td: r.TargetDepth, depth: di, rel: ri})
			}
		}
	}
	return nil
}
