package grounding

import "time"

// learnReachability places the proposed edge: a LEARNED relatum appended
// to the source's depth at source_depth_level. Learn's final Apply rejects
// it if it would close a transitive cycle, so nothing half-done escapes.
func (g *Graph) learnReachability(gap Gap, cand Candidate, now time.Time) (Primitive, error) {
	if err := validateReachability(gap, cand); err != nil {
		return Primitive{}, err
	}
	src, err := g.resolveName(cand.SourceName)
	if err != nil {
		return Primitive{}, err
	}
	dst, err := g.resolveName(cand.TargetName)
	if err != nil {
		return Primitive{}, err
	}
	if err := endpointDeep("Source", src, *cand.SourceDepthLevel); err != nil {
		return Primitive{}, err
	}
	if err := endpointDeep("Target", dst, *cand.TargetDepthLevel); err != nil {
		return Primitive{}, err
	}
	rev := src.prim.Clone()
	rev.Provenance.UpdatedAt = now.UTC()
	k := rev.depthAt(*cand.SourceDepthLevel)
	rel := Relatum{RelationType: cand.RelationType, TargetID: dst.prim.ID, TargetDepth: *cand.TargetDepthLevel, Metadata: JSONObject{}, Provenance: stamp(Learned, now)}
	rev.Depths[k].Relata = append(rev.Depths[k].Relata, rel)
	return rev, nil
}

// validateReachability is ReachabilityCandidate.validate_for_gap (§4.2).
func validateReachability(gap Gap, cand Candidate) error {
	switch {
	case cand.SourceName == "" || cand.TargetName == "":
		return invalidCandidate("ReachabilityCandidate missing source_name or target_name")
	case cand.RelationType == "":
		return invalidCandidate("ReachabilityCandidate missing relation_type")
	case cand.SourceDepthLevel == nil || cand.TargetDepthLevel == nil:
		return invalidCandidate("ReachabilityCandidate missing source_depth_level or target_depth_level")
	case !cand.RelationType.Valid():
		return invalidCandidate("ReachabilityCandidate has unknown relation_type '%s'", cand.RelationType)
	case !cand.SourceDepthLevel.Valid() || !cand.TargetDepthLevel.Valid():
		return invalidCandidate("ReachabilityCandidate depth levels must be in 0..4")
	case Fold(cand.SourceName) != Fold(gap.Primitive) && Fold(cand.TargetName) != Fold(gap.Primitive):
		return invalidCandidate("ReachabilityCandidate must reference the gapped primitive '%s' as either source or target (got '%s' → '%s')",
			gap.Primitive, cand.SourceName, cand.TargetName)
	}
	return nil
}

func (g *Graph) resolveName(name string) (*gnode, error) {
	i, ok := g.byFold[Fold(name)]
	if !ok {
		return nil, invalidCandidate("Cannot resolve '%s' to a primitive ID", name)
	}
	return &g.nodes[i], nil
}

// endpointDeep requires an edge end to be contiguously grounded to the
// level the edge sits on; otherwise the DepthGap must be filled first.
func endpointDeep(role string, n *gnode, level DepthLevel) error {
	if n.cmax >= int(level) {
		return nil
	}
	return invalidCandidate("%s '%s' requires %s for this edge but is only contiguously grounded to %s. Fill the DepthGap first.",
		role, n.prim.Name, level, levelLabel(levelPtr(n.cmax)))
}

// ReachabilityPrerequisites lists the DepthGaps that must be filled before
// cand's edge can be placed (spec §4.3): source first, then target. An
// empty list means Learn can place the edge.
func (g *Graph) ReachabilityPrerequisites(gap Gap, cand Candidate) ([]Gap, error) {
	if cand.Kind != gap.Kind {
		return nil, invalidCandidate("Candidate kind '%s' does not match gap kind '%s'", cand.Kind, gap.Kind)
	}
	if gap.Kind != ReachabilityGap {
		return nil, invalidCandidate("reachability prerequisites need a REACHABILITY gap, got %s", gap.Kind)
	}
	if err := validateReachability(gap, cand); err != nil {
		return nil, err
	}
	out := []Gap{}
	for _, end := range []struct {
		name  string
		level DepthLevel
	}{{cand.SourceName, *cand.SourceDepthLevel}, {cand.TargetName, *cand.TargetDepthLevel}} {
		n, err := g.resolveName(end.name)
		if err != nil {
			return nil, err
		}
		if n.cmax < int(end.level) {
			out = append(out, newDepthGap(n.prim.Name, n.mask, n.cmax, int(end.level)))
		}
	}
	return out, nil
}
