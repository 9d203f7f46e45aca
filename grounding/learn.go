package grounding

import (
	"time"
)

// Learn validates cand as the fill for gap against the live graph and
// returns the revisions to persist (then Apply them to g). It follows spec
// §4.2 in order: kind match, the candidate's own checks, then the
// persistence path for the kind with its live-state checks. Everything it
// writes is stamped LEARNED at now. Errors: *CandidateValidationError,
// *GapResolvedError (the gap already closed; nothing to write), or a
// *GraphError when the result would break a graph rule (a reachability
// edge that closes a transitive cycle).
func (g *Graph) Learn(gap Gap, cand Candidate, now time.Time) ([]Primitive, error) {
	if cand.Kind != gap.Kind {
		return nil, invalidCandidate("Candidate kind '%s' does not match gap kind '%s'", cand.Kind, gap.Kind)
	}
	var rev Primitive
	var err error
	switch gap.Kind {
	case ExistenceGap:
		rev, err = g.learnExistence(gap, cand, now)
	case DepthGap:
		rev, err = g.learnDepths("DepthCandidate", gap, gap.Primitive, cand, now)
	case RelationalGap:
		rev, err = g.learnDepths("RelationalCandidate", gap, gap.Target, cand, now)
	case ReachabilityGap:
		rev, err = g.learnReachability(gap, cand, now)
	default:
		return nil, invalidCandidate("No persistence path for gap %s with candidate %s", gap.Kind, cand.Kind)
	}
	if err != nil {
		return nil, err
	}
	if _, gerr := g.Apply([]Primitive{rev}); gerr != nil {
		return nil, gerr
	}
	return []Primitive{rev}, nil
}

// learnExistence creates the concept: D0 {"exists": true} and the proposed
// D1, all LEARNED (spec §4.2 existence path).
func (g *Graph) learnExistence(gap Gap, cand Candidate, now time.Time) (Primitive, error) {
	if err := validateExistence(gap, cand); err != nil {
		return Primitive{}, err
	}
	if live, ok := g.ByName(cand.Name); ok {
		return Primitive{}, gapResolved("'%s' already exists in the graph as '%s'; the existence gap is resolved", cand.Name, live.Name)
	}
	id := PrimitiveID(cand.Name)
	if holder, taken := g.byID[id]; taken {
		return Primitive{}, invalidCandidate("ExistenceCandidate '%s' would take id %s, held by primitive '%s'", cand.Name, id, g.nodes[holder].prim.Name)
	}
	prov := stamp(Learned, now)
	return Primitive{ID: id, Name: cand.Name, Provenance: prov, Depths: []Depth{
		{Level: Existence, Properties: JSONObject{"exists": true}, Relata: []Relatum{}, Provenance: prov},
		{Level: Identity, Properties: cand.D1.Properties.clone(), Relata: []Relatum{}, Provenance: prov},
	}}, nil
}

func validateExistence(gap Gap, cand Candidate) error {
	switch {
	case cand.D1 == nil:
		return invalidCandidate("ExistenceCandidate is missing D1 (identity)")
	case Fold(cand.Name) != Fold(gap.Primitive):
		return invalidCandidate("ExistenceCandidate name '%s' does not match the gapped concept '%s'", cand.Name, gap.Primitive)
	case cand.D1.Level != Identity:
		return invalidCandidate("ExistenceCandidate d1 must be at level %s, got %s", Identity, cand.D1.Level)
	case len(cand.D1.Properties) == 0:
		return invalidCandidate("ExistenceCandidate d1 has no properties; a depth without properties or relata does not count toward grounding")
	}
	return nil
}
