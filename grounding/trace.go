package grounding

// result assembles the response (spec §2.8): the frontier in all_nodes
// order, trimmed; the visible frontier edges as the pathway; grounded iff
// there are no gaps; resolved maps each raw input to its canonical name.
func (e *engine) result(concepts, folds []string, gaps []Gap) Result {
	if gaps == nil {
		gaps = []Gap{}
	}
	r := Result{Grounded: len(gaps) == 0, Gaps: gaps}
	r.Trace.Query.ConceptIDs = make([]string, len(e.roots))
	for i, n := range e.roots {
		r.Trace.Query.ConceptIDs[i] = e.nodes[n].id
	}
	r.Trace.Result.Primitives = e.tracePrimitives()
	r.Trace.Result.Pathway = make([]Step, len(e.visible))
	for i, ei := range e.visible {
		ed := e.edges[ei]
		r.Trace.Result.Pathway[i] = Step{e.nodes[ed.src].name, e.nodes[ed.dst].name, ed.typ, ed.sd, ed.td}
	}
	r.Resolved = e.resolve(concepts, folds)
	return r
}

// resolve gives known concepts their stored casing and echoes unknown ones
// as the first spelling that created the transient; duplicates are kept.
func (e *engine) resolve(concepts, folds []string) []string {
	canonical := make(map[string]string, len(e.roots))
	for _, n := range e.roots {
		canonical[e.nodes[n].fold] = e.nodes[n].name
	}
	out := make([]string, len(concepts))
	for i, c := range concepts {
		if name, ok := canonical[folds[i]]; ok {
			out[i] = name
		} else {
			out[i] = c
		}
	}
	return out
}

func (e *engine) tracePrimitives() []TracePrimitive {
	at := make(map[string]int, len(e.nodes))
	for i := range e.nodes {
		if e.frontier[i] {
			at[e.nodes[i].id] = i
		}
	}
	out := []TracePrimitive{}
	for i := range e.nodes {
		if e.frontier[i] {
			out = append(out, e.tracePrimitive(&e.nodes[i], at))
		}
	}
	return out
}

// tracePrimitive ships only depths within the contiguous chain (content
// above it never leaves) and only relata whose target is in the frontier.
func (e *engine) tracePrimitive(n *enode, frontierAt map[string]int) TracePrimitive {
	tp := TracePrimitive{ID: n.id, Name: n.name, Depths: []TraceDepth{}}
	if n.transient() {
		return tp
	}
	for _, d := range n.prim.Depths {
		if int(d.Level) > n.cmax {
			continue
		}
		td := TraceDepth{Level: d.Level, Properties: d.Properties.clone().orEmpty(), Relata: []TraceRelatum{}}
		for _, rel := range d.Relata {
			if t, ok := frontierAt[rel.TargetID]; ok {
				td.Relata = append(td.Relata, TraceRelatum{rel.RelationType, e.nodes[t].name, rel.TargetID, rel.TargetDepth})
			}
		}
		tp.Depths = append(tp.Depths, td)
	}
	return tp
}
