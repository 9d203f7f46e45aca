package grounding

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestReachabilityPrerequisites(t *testing.T) {
	g := learnGraph(t)
	// Source {D0,D1,D3} placing an edge at D2: one gap on the source.
	got, err := g.ReachabilityPrerequisites(newReachabilityGap("create"), reachCand("create", 2, AppliesTo, "file", 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Kind != DepthGap || got[0].Primitive != "create" || got[0].RequiredDepth != 2 ||
		got[0].CurrentDepth == nil || *got[0].CurrentDepth != 1 || !slices.Equal(got[0].MissingLevels, []DepthLevel{2}) {
		t.Fatalf("prerequisites %+v", got)
	}
	// Reverse direction: the target is deep enough, the {D0} source is not.
	got, err = g.ReachabilityPrerequisites(newReachabilityGap("copy"), reachCand("orphan", 2, AppliesTo, "copy", 1))
	if err != nil || len(got) != 1 || got[0].Primitive != "orphan" || !slices.Equal(got[0].MissingLevels, []DepthLevel{1, 2}) {
		t.Fatalf("prerequisites %+v, %v", got, err)
	}
	got, err = g.ReachabilityPrerequisites(newReachabilityGap("orphan"), reachCand("orphan", 0, AppliesTo, "copy", 3))
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("placeable edge: %+v, %v", got, err)
	}
	for want, cand := range map[string]Candidate{
		"missing":                             {Kind: ReachabilityGap},
		"must reference the gapped primitive": reachCand("copy", 1, AppliesTo, "file", 1),
		"Cannot resolve 'ghost'":              reachCand("orphan", 0, AppliesTo, "ghost", 1),
		"does not match gap kind":             {Kind: DepthGap},
	} {
		_, err := g.ReachabilityPrerequisites(newReachabilityGap("orphan"), cand)
		wantCandidateError(t, err, want)
	}
}

func TestTemplateFor(t *testing.T) {
	cur := DepthLevel(1)
	cases := map[string]struct {
		gap  Gap
		want string
	}{
		"existence":    {newExistenceGap("Net"), `{"kind":"EXISTENCE","name":"Net","d1":{"level":1,"properties":{}}}`},
		"depth":        {Gap{Kind: DepthGap, Primitive: "x", RequiredDepth: 3, CurrentDepth: &cur, MissingLevels: []DepthLevel{2, 3}}, `{"kind":"DEPTH","new_depths":[{"level":2,"properties":{}},{"level":3,"properties":{}}]}`},
		"relational":   {Gap{Kind: RelationalGap, Source: "a", Target: "b", RequiredDepth: 2, MissingLevels: []DepthLevel{2}}, `{"kind":"RELATIONAL","new_depths":[{"level":2,"properties":{}}]}`},
		"reachability": {newReachabilityGap("x"), `{"kind":"REACHABILITY","source_name":null,"target_name":null,"relation_type":null,"source_depth_level":null,"target_depth_level":null}`},
	}
	for name, c := range cases {
		cand, err := TemplateFor(c.gap)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := json.Marshal(cand)
		if err != nil || string(b) != c.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", name, b, err, c.want)
		}
	}
	if _, err := json.Marshal(Candidate{Kind: "WIDTH"}); err == nil {
		t.Error("a candidate of unknown kind marshalled")
	}
	_, err := TemplateFor(Gap{Kind: "WIDTH"})
	var ue *UnknownGapError
	if !errors.As(err, &ue) || err.Error() != `Unknown gap type: "WIDTH"` {
		t.Fatalf("err = %v", err)
	}
}

func TestCandidateJSON(t *testing.T) {
	in := `{"kind":"REACHABILITY","source_name":"a","target_name":"b","relation_type":"REQUIRES","source_depth_level":2,"target_depth_level":0}`
	var c Candidate
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	if c.SourceName != "a" || c.RelationType != Requires || *c.SourceDepthLevel != 2 || *c.TargetDepthLevel != 0 {
		t.Fatalf("decoded %+v", c)
	}
	out, _ := json.Marshal(c)
	if string(out) != in {
		t.Fatalf("round trip:\n%s\n%s", out, in)
	}
	for _, bad := range []string{
		`{"kind":"DEPTH","new_depths":[{"level":5,"properties":{}}]}`,
		`{"kind":"REACHABILITY","relation_type":"CAUSES"}`,
		`{"kind":"DEPTH","newDepths":[]}`,
		`{"kind":"WIDTH"}`,
	} {
		if err := json.Unmarshal([]byte(bad), &c); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// fill plays the integrator: it fills every template slot and, for a
// reachability gap, connects the gapped primitive to "file" at D1.
func fill(t *testing.T, g *Graph, gap Gap) Candidate {
	t.Helper()
	wire, err := json.Marshal(gap) // the agent receives and returns JSON
	if err != nil {
		t.Fatal(err)
	}
	var back Gap
	if err := json.Unmarshal(wire, &back); err != nil {
		t.Fatal(err)
	}
	cand, err := TemplateFor(back)
	if err != nil {
		t.Fatal(err)
	}
	switch cand.Kind {
	case ExistenceGap:
		cand.D1.Properties = props("learned identity")
	case DepthGap, RelationalGap:
		for i := range cand.NewDepths {
			cand.NewDepths[i].Properties = props(fmt.Sprintf("learned D%d", cand.NewDepths[i].Level))
		}
	case ReachabilityGap:
		cand = reachCand(gap.Primitive, 1, AppliesTo, "file", 1)
		pre, err := g.ReachabilityPrerequisites(gap, cand)
		if err != nil || len(pre) != 0 {
			t.Fatalf("prerequisites %+v %v", pre, err)
		}
	}
	return cand
}

// The full loop of spec §4: check → template → fill → Learn → Apply →
// re-check, until grounded. The query starts with all four gap kinds.
func TestLearningLoopGrounds(t *testing.T) {
	g := mustGraph(t, full("path"),
		prim("file", dep(0), dep(1, rel(Requires, "path", 1))),
		prim("create", dep(0), dep(1), dep(3, rel(AppliesTo, "file", 2))),
		full("lone"))
	query := []string{"create", "file", "Network", "lone"}
	seen := map[GapKind]int{}
	r := mustCheck(t, g, query, nil)
	for step := 0; !r.Grounded; step++ {
		if step == 10 {
			t.Fatalf("not grounded after 10 steps: %+v", r.Gaps)
		}
		gap := r.Gaps[0]
		seen[gap.Kind]++
		t.Logf("step %d: %s", step, gap.Message)
		revs, err := g.Learn(gap, fill(t, g, gap), t0)
		if err != nil {
			t.Fatalf("learn %s: %v", gap.Message, err)
		}
		if g, err = g.Apply(revs); err != nil {
			t.Fatal(err)
		}
		r = mustCheck(t, g, query, nil)
	}
	for _, k := range []GapKind{ExistenceGap, DepthGap, RelationalGap, ReachabilityGap} {
		if seen[k] == 0 {
			t.Errorf("the loop never met a %s gap (%v)", k, seen)
		}
	}
	if p, _ := g.ByName("network"); p.Provenance.Source != Learned {
		t.Fatalf("learned concept provenance %+v", p.Provenance)
	}
}
