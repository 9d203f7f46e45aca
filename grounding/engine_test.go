package grounding

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// §7 #31: content above the contiguous chain never ships.
func TestEngine31DormantDepthIsTrimmed(t *testing.T) {
	g := mustGraph(t, prim("widget", dep(0), dep(1), dep(3)))
	r := mustCheck(t, g, []string{"widget"}, nil)
	if !r.Grounded || len(r.Trace.Result.Primitives) != 1 {
		t.Fatalf("result %+v", r)
	}
	var levels []DepthLevel
	for _, d := range r.Trace.Result.Primitives[0].Depths {
		levels = append(levels, d.Level)
	}
	if !slices.Equal(levels, []DepthLevel{0, 1}) {
		t.Fatalf("shipped levels %v, want [0 1]", levels)
	}
}

// Relata leaving the frontier are trimmed from shipped depths too.
func TestTraceRelataStayInFrontier(t *testing.T) {
	g := mustGraph(t, full("file"), full("dir"),
		prim("read", dep(0), dep(1), dep(2, rel(AppliesTo, "file", 2), rel(AppliesTo, "dir", 2))))
	r := mustCheck(t, g, []string{"read", "file"}, nil)
	got := r.AppliesToEdges()
	want := []Edge{{Source: "read", Target: "file", SourceDepth: 2, TargetDepth: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("edges %+v, want %+v", got, want)
	}
	d2 := r.Trace.Result.Primitives[len(r.Trace.Result.Primitives)-1].Depths[2]
	if len(d2.Relata) != 1 || d2.Relata[0].Target != "file" || d2.Relata[0].TargetID != PrimitiveID("file") {
		t.Fatalf("read D2 relata %+v", d2.Relata)
	}
}

// §7 #32: an edge the traversal should never produce fails loudly.
func TestEngine32GraphIntegrityError(t *testing.T) {
	g := mustGraph(t, full("a"), full("b"))
	for _, c := range []struct {
		name     string
		src, dst string
	}{{"target missing", PrimitiveID("a"), PrimitiveID("ghost")}, {"source missing", PrimitiveID("ghost"), PrimitiveID("a")}} {
		t.Run(c.name, func(t *testing.T) {
			sub := g.resolveSubgraph(map[string]bool{"a": true})
			sub.edges = append(sub.edges, subEdge{c.src, c.dst, Requires, 1, 1})
			_, err := ground(sub, []string{"a"}, []string{"a"}, nil)
			var ie *GraphIntegrityError
			if !errors.As(err, &ie) || ie.Missing != PrimitiveID("ghost") || !strings.Contains(err.Error(), PrimitiveID("ghost")) {
				t.Fatalf("err = %v, want GraphIntegrityError on the ghost id", err)
			}
		})
	}
}

func TestTransientIDsAreStable(t *testing.T) {
	g := mustGraph(t, full("file"))
	a := mustCheck(t, g, []string{"Frobnicate", "file"}, nil)
	b := mustCheck(t, g, []string{"frobnicate", "file"}, nil)
	// uuid5(transient namespace, "frobnicate") computed by CPython.
	const want = "9e9b89dc-ce16-586f-ac50-d79188fd9ea9"
	if a.Trace.Query.ConceptIDs[0] != want || b.Trace.Query.ConceptIDs[0] != want {
		t.Fatalf("ids %v %v, want %s", a.Trace.Query.ConceptIDs, b.Trace.Query.ConceptIDs, want)
	}
	if a.Trace.Query.ConceptIDs[1] != PrimitiveID("file") {
		t.Fatal("known root id is not the stored id")
	}
	if tp := a.Trace.Result.Primitives[1]; tp.Name != "Frobnicate" || len(tp.Depths) != 0 {
		t.Fatalf("transient in trace = %+v (transients follow stored nodes)", tp)
	}
}

func TestEmptyQueryHasEmptyTraceNotNull(t *testing.T) {
	r := mustCheck(t, mustGraph(t, full("file")), nil, nil)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"grounded":false,"resolved":[],"gaps":[],"trace":{"query":{"concept_ids":[]},"result":{"primitives":[],"pathway":[]}}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

func TestMinDepthOutsideRangeIsRejected(t *testing.T) {
	g := mustGraph(t, full("file"))
	for _, d := range []int{-1, 5} {
		if _, err := g.Check([]string{"file"}, intp(d)); err == nil {
			t.Errorf("min_depth %d accepted", d)
		}
	}
}

func TestGapMessagesAndJSONShapes(t *testing.T) {
	g := mustGraph(t, prim("b", dep(0), dep(1)),
		prim("a", dep(0), dep(1, rel(Requires, "b", 2)), dep(3, rel(AppliesTo, "b", 1))),
		prim("lone", dep(1)))
	r := mustCheck(t, g, []string{"a", "lone", "ghost"}, nil)
	want := []string{
		`{"kind":"EXISTENCE","primitive":"ghost","message":"EXISTENCE: 'ghost' is not in the knowledge graph"}`,
		`{"kind":"DEPTH","primitive":"a","required_depth":3,"current_depth":1,"missing_levels":[2],"message":"DEPTH: 'a' known to D1 IDENTITY, requires D3 CONSTRAINTS"}`,
		`{"kind":"RELATIONAL","source":"a","target":"b","required_depth":2,"current_depth":1,"missing_levels":[2],"message":"RELATIONAL: 'a' → 'b' requires D2 CAPABILITIES on target, found D1 IDENTITY"}`,
		`{"kind":"REACHABILITY","primitive":"lone","message":"REACHABILITY: 'lone' is not connected to other concepts"}`,
	}
	if len(r.Gaps) != len(want) {
		t.Fatalf("gaps %+v", r.Gaps)
	}
	if r.Gaps[2].Subject() != "b" || r.Gaps[1].Subject() != "a" {
		t.Error("a RELATIONAL gap is about its target, a DEPTH gap about its primitive")
	}
	for i, gap := range r.Gaps {
		b, err := json.Marshal(gap)
		if err != nil || string(b) != want[i] {
			t.Errorf("gap %d:\n got %s (%v)\nwant %s", i, b, err, want[i])
		}
	}
	r = mustCheck(t, g, []string{"lone"}, intp(1))
	b, _ := json.Marshal(r.Gaps[0])
	if !strings.Contains(string(b), `"current_depth":null`) || !strings.Contains(string(b), "known to none, requires D1 IDENTITY") {
		t.Fatalf("none rendering: %s", b)
	}
}

// The brief fixes phase 2(b) order to root input order (the spec leaves
// backend order open; the pack compares by kind).
func TestMinDepthGapsFollowRootInputOrder(t *testing.T) {
	g := mustGraph(t, prim("file", dep(0), dep(1)), prim("read", dep(0), dep(1), dep(2)))
	r := mustCheck(t, g, []string{"read", "file"}, intp(3))
	var names []string
	for _, gap := range r.Gaps {
		if gap.Kind == DepthGap {
			names = append(names, gap.Primitive)
		}
	}
	if !slices.Equal(names, []string{"read", "file"}) {
		t.Fatalf("depth gaps on %v, want read then file", names)
	}
}

func TestResultJSONRoundTrip(t *testing.T) {
	g := mustGraph(t, prim("b", dep(0), dep(1)), prim("a", dep(0), dep(1, rel(Requires, "b", 2))))
	r := mustCheck(t, g, []string{"A", "ghost"}, intp(2))
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(back)
	if string(b) != string(b2) {
		t.Fatalf("round trip differs:\n%s\n%s", b, b2)
	}
	if len(back.Gaps) != 3 || back.Gaps[1].CurrentDepth == nil || *back.Gaps[1].CurrentDepth != 1 {
		t.Fatalf("gaps after round trip %+v", back.Gaps)
	}
}

func TestGapUnmarshalValidates(t *testing.T) {
	for _, bad := range []string{
		`{"kind":"DEPTH","primitive":"x"}`,
		`{"kind":"DEPTH","primitive":"x","required_depth":5}`,
		`{"kind":"RELATIONAL","source":"a","required_depth":1}`,
		`{"kind":"EXISTENCE"}`,
		`{"kind":"WIDTH","primitive":"x"}`,
	} {
		var g Gap
		if err := json.Unmarshal([]byte(bad), &g); err == nil {
			t.Errorf("%s decoded to %+v", bad, g)
		}
	}
	var g Gap
	if err := json.Unmarshal([]byte(`{"kind":"DEPTH","primitive":"x","required_depth":2,"current_depth":null}`), &g); err != nil {
		t.Fatal(err)
	}
	if g.Message != "DEPTH: 'x' known to none, requires D2 CAPABILITIES" {
		t.Fatalf("message = %q", g.Message)
	}
}
