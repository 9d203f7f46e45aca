package grounding

import (
	"slices"
	"testing"
)

// The demo fixture must ground ["delete","file"] fully and carry the
// delete→file @D3 APPLIES_TO edge an edge policy is placed on.
func TestDemoGraphDeleteFile(t *testing.T) {
	g := demoGraph(t)
	if g.Len() != 10 {
		t.Fatalf("demo graph has %d primitives, want 10", g.Len())
	}
	if !g.HasAppliesTo("delete", "file", 3) {
		t.Fatal("no delete→file APPLIES_TO at D3")
	}
	r := mustCheck(t, g, []string{"delete", "file"}, nil)
	if !r.Grounded {
		t.Fatalf("not grounded: %+v", r.Gaps)
	}
	var names []string
	for _, p := range r.Trace.Result.Primitives {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	want := []string{"delete", "file", "filesystem", "path", "permission", "protected_path", "user"}
	if !slices.Equal(names, want) {
		t.Fatalf("frontier %v, want %v", names, want)
	}
	if len(r.Trace.Result.Pathway) != 12 {
		t.Fatalf("pathway has %d steps, want 12", len(r.Trace.Result.Pathway))
	}
	if !slices.Contains(r.AppliesToEdges(), Edge{Source: "delete", Target: "file", SourceDepth: 3, TargetDepth: 2}) {
		t.Fatalf("delete→file missing from %+v", r.AppliesToEdges())
	}
}

// Without file in the query the policy edge is not in the trace (§3.4).
func TestDemoGraphDeleteAloneHasNoFileEdge(t *testing.T) {
	r := mustCheck(t, demoGraph(t), []string{"delete"}, nil)
	if !r.Grounded {
		t.Fatalf("not grounded: %+v", r.Gaps)
	}
	if edges := r.AppliesToEdges(); len(edges) != 0 {
		t.Fatalf("APPLIES_TO edges %+v, want none", edges)
	}
}
