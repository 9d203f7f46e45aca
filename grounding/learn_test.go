package grounding

import (
	"errors"
	"strings"
	"testing"
)

// learnGraph: file and create are shallow, holey has a hole under an
// authored D2, copy is complete, orphan has only D0.
func learnGraph(t *testing.T) *Graph {
	return mustGraph(t, full("path"),
		prim("file", dep(0), dep(1)),
		prim("create", dep(0), dep(1), dep(3, rel(AppliesTo, "file", 2))),
		prim("holey", dep(0), dep(2, rel(Requires, "path", 1))),
		full("copy"),
		prim("orphan", dep(0)))
}

func wantCandidateError(t *testing.T, err error, substr string) {
	t.Helper()
	var ce *CandidateValidationError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), substr) {
		t.Fatalf("err = %v, want CandidateValidationError containing %q", err, substr)
	}
}

func wantResolved(t *testing.T, err error, substr string) {
	t.Helper()
	var re *GapResolvedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), substr) {
		t.Fatalf("err = %v, want GapResolvedError containing %q", err, substr)
	}
}

func props(s string) JSONObject { return JSONObject{"description": s} }

func depthGap(name string, required int) Gap {
	return Gap{Kind: DepthGap, Primitive: name, RequiredDepth: DepthLevel(required)}
}

func depthCand(kind GapKind, levels ...int) Candidate {
	c := Candidate{Kind: kind}
	for _, l := range levels {
		c.NewDepths = append(c.NewDepths, ProposedDepth{Level: DepthLevel(l), Properties: props("x")})
	}
	return c
}

func TestLearnKindErrors(t *testing.T) {
	g := learnGraph(t)
	_, err := g.Learn(depthGap("file", 2), Candidate{Kind: ExistenceGap}, t0)
	wantCandidateError(t, err, "Candidate kind 'EXISTENCE' does not match gap kind 'DEPTH'")
	_, err = g.Learn(Gap{Kind: "WIDTH"}, Candidate{Kind: "WIDTH"}, t0)
	wantCandidateError(t, err, "No persistence path for gap WIDTH with candidate WIDTH")
}

func TestLearnExistence(t *testing.T) {
	g := learnGraph(t)
	gap := newExistenceGap("Network")
	d1 := &ProposedDepth{Level: Identity, Properties: props("a set of connected hosts")}
	for _, c := range []struct {
		cand Candidate
		want string
	}{
		{Candidate{Kind: ExistenceGap, Name: "Network"}, "ExistenceCandidate is missing D1 (identity)"},
		{Candidate{Kind: ExistenceGap, Name: "socket", D1: d1}, "does not match the gapped concept 'Network'"},
		{Candidate{Kind: ExistenceGap, Name: "network", D1: &ProposedDepth{Level: Capabilities, Properties: props("x")}}, "must be at level D1 IDENTITY"},
		{Candidate{Kind: ExistenceGap, Name: "network", D1: &ProposedDepth{Level: Identity}}, "no properties"},
	} {
		_, err := g.Learn(gap, c.cand, t0)
		wantCandidateError(t, err, c.want)
	}
	_, err := g.Learn(newExistenceGap("Copy"), Candidate{Kind: ExistenceGap, Name: "Copy", D1: d1}, t0)
	wantResolved(t, err, "already exists")

	revs, err := g.Learn(gap, Candidate{Kind: ExistenceGap, Name: "network", D1: d1}, t0)
	if err != nil {
		t.Fatal(err)
	}
	p := revs[0]
	if p.Name != "network" || p.ID != PrimitiveID("Network") || len(p.Depths) != 2 ||
		p.Depths[0].Properties["exists"] != true || p.Depths[1].Properties["description"] != "a set of connected hosts" {
		t.Fatalf("revision %+v", p)
	}
	for _, pv := range []Provenance{p.Provenance, p.Depths[0].Provenance, p.Depths[1].Provenance} {
		if pv.Source != Learned || !pv.CreatedAt.Equal(t0) {
			t.Fatalf("provenance %+v, want learned at t0", pv)
		}
	}
	if _, ok := g.ByName("network"); ok {
		t.Fatal("Learn changed the graph it was called on")
	}
}

func TestLearnDepthErrors(t *testing.T) {
	g := learnGraph(t)
	for _, c := range []struct {
		name string
		gap  Gap
		cand Candidate
		want string
	}{
		{"empty", depthGap("file", 3), depthCand(DepthGap), "DepthCandidate has no new depths"},
		{"not found", depthGap("ghost", 3), depthCand(DepthGap, 1), "Primitive 'ghost' not found"},
		{"duplicate", depthGap("file", 3), depthCand(DepthGap, 2, 2, 3), "duplicate depth levels [2]"},
		{"above required", depthGap("file", 3), depthCand(DepthGap, 2, 3, 4), "above the depth the gap requires (D3 CONSTRAINTS)"},
		{"already present", depthGap("create", 3), depthCand(DepthGap, 2, 3), "D3 CONSTRAINTS, which is already grounded; fill only the missing levels [2]"},
		{"not contiguous", depthGap("file", 3), depthCand(DepthGap, 3), "contiguous chain through D3 CONSTRAINTS; fill the holes: [2]"},
		{"vacuous", depthGap("file", 2), Candidate{Kind: DepthGap, NewDepths: []ProposedDepth{{Level: 2}}}, "no properties"},
		{"level range", depthGap("file", 2), depthCand(DepthGap, 7), "outside 0..4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := g.Learn(c.gap, c.cand, t0)
			wantCandidateError(t, err, c.want)
		})
	}
	_, err := g.Learn(depthGap("copy", 3), depthCand(DepthGap, 3), t0)
	wantResolved(t, err, "already resolved")
}

// Filling a hole keeps the dormant authored level, relata and provenance
// untouched and makes it reachable again (spec §4.2 example).
func TestLearnDepthFillsHoleUnderDormantLevel(t *testing.T) {
	g := learnGraph(t)
	revs, err := g.Learn(depthGap("holey", 2), depthCand(DepthGap, 1), t0.Add(1))
	if err != nil {
		t.Fatal(err)
	}
	p := revs[0]
	if c := p.ContiguousMax(); c == nil || *c != Capabilities {
		t.Fatalf("cmax = %v, want D2", c)
	}
	d1, d2 := p.Depths[1], p.Depths[2]
	if d1.Level != 1 || d1.Provenance.Source != Learned || d2.Level != 2 || d2.Provenance.Source != Authored ||
		len(d2.Relata) != 1 || d2.Relata[0].Provenance.Source != Authored || d2.Relata[0].TargetID != PrimitiveID("path") {
		t.Fatalf("depths %+v", p.Depths)
	}
	if !p.Provenance.CreatedAt.Equal(t0) || !p.Provenance.UpdatedAt.Equal(t0.Add(1)) {
		t.Fatalf("node provenance %+v", p.Provenance)
	}
}

func TestLearnRelational(t *testing.T) {
	g := learnGraph(t)
	gap := Gap{Kind: RelationalGap, Source: "create", Target: "file", RequiredDepth: 2}
	_, err := g.Learn(gap, depthCand(RelationalGap), t0)
	wantCandidateError(t, err, "RelationalCandidate has no new depths")
	_, err = g.Learn(Gap{Kind: RelationalGap, Source: "create", Target: "ghost", RequiredDepth: 2}, depthCand(RelationalGap, 1), t0)
	wantCandidateError(t, err, "Primitive 'ghost' not found")
	_, err = g.Learn(Gap{Kind: RelationalGap, Source: "create", Target: "copy", RequiredDepth: 2}, depthCand(RelationalGap, 2), t0)
	wantResolved(t, err, "already resolved")
	revs, err := g.Learn(gap, depthCand(RelationalGap, 2), t0)
	if err != nil {
		t.Fatal(err)
	}
	if revs[0].Name != "file" || len(revs[0].Depths) != 3 || revs[0].Depths[2].Provenance.Source != Learned {
		t.Fatalf("revision on the target %+v", revs[0])
	}
}

func reachCand(src string, sl int, typ RelationType, dst string, tl int) Candidate {
	s, d := DepthLevel(sl), DepthLevel(tl)
	return Candidate{Kind: ReachabilityGap, SourceName: src, TargetName: dst, RelationType: typ, SourceDepthLevel: &s, TargetDepthLevel: &d}
}

func TestLearnReachabilityErrors(t *testing.T) {
	g := learnGraph(t)
	gap := newReachabilityGap("orphan")
	noType := reachCand("orphan", 0, "", "copy", 1)
	noLevel := reachCand("orphan", 0, AppliesTo, "copy", 1)
	noLevel.TargetDepthLevel = nil
	for _, c := range []struct {
		name string
		gap  Gap
		cand Candidate
		want string
	}{
		{"names", gap, Candidate{Kind: ReachabilityGap, SourceName: "orphan"}, "ReachabilityCandidate missing source_name or target_name"},
		{"type", gap, noType, "ReachabilityCandidate missing relation_type"},
		{"levels", gap, noLevel, "ReachabilityCandidate missing source_depth_level or target_depth_level"},
		{"bad type", gap, reachCand("orphan", 0, "CAUSES", "copy", 1), "unknown relation_type 'CAUSES'"},
		{"bad level", gap, reachCand("orphan", 0, AppliesTo, "copy", 6), "depth levels must be in 0..4"},
		{"unrelated", gap, reachCand("copy", 1, AppliesTo, "file", 1), "must reference the gapped primitive 'orphan' as either source or target"},
		{"unknown", gap, reachCand("orphan", 0, AppliesTo, "nowhere", 1), "Cannot resolve 'nowhere' to a primitive ID"},
		{"source shallow", gap, reachCand("orphan", 2, AppliesTo, "copy", 1), "Source 'orphan' requires D2 CAPABILITIES for this edge but is only contiguously grounded to D0 EXISTENCE. Fill the DepthGap first."},
		{"target shallow", gap, reachCand("copy", 1, AppliesTo, "orphan", 1), "Target 'orphan' requires D1 IDENTITY for this edge but is only contiguously grounded to D0 EXISTENCE."},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := g.Learn(c.gap, c.cand, t0)
			wantCandidateError(t, err, c.want)
		})
	}
}

func TestLearnReachabilityCycleIsRejected(t *testing.T) {
	g := learnGraph(t)
	// holey D2 REQUIRES path, so path DEPENDS_ON holey would loop.
	_, err := g.Learn(newReachabilityGap("path"), reachCand("path", 1, DependsOn, "holey", 0), t0)
	var ge *GraphError
	if !errors.As(err, &ge) || ge.Rule != RuleCycle {
		t.Fatalf("err = %v, want a transitive cycle GraphError", err)
	}
	if p, _ := g.ByName("path"); len(p.Depths[1].Relata) != 0 {
		t.Fatal("the rejected relatum leaked into the graph")
	}
}

func TestLearnReachabilityAppendsLearnedRelatum(t *testing.T) {
	g := learnGraph(t)
	revs, err := g.Learn(newReachabilityGap("orphan"), reachCand("ORPHAN", 0, AppliesTo, "copy", 1), t0)
	if err != nil {
		t.Fatal(err)
	}
	rels := revs[0].Depths[0].Relata
	if revs[0].Name != "orphan" || len(rels) != 1 || rels[0].TargetID != PrimitiveID("copy") ||
		rels[0].RelationType != AppliesTo || rels[0].TargetDepth != 1 || rels[0].Provenance.Source != Learned {
		t.Fatalf("revision %+v", revs[0])
	}
}
