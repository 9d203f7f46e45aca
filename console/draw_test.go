package console

import "testing"

// A cycle is cut at its back edge, so the layers stay as deep as the
// longest acyclic path instead of stretching to the node count.
func TestLayersCutCycles(t *testing.T) {
	nodes := []drawNode{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	edges := []drawEdge{{From: "a", To: "b"}, {From: "b", To: "c"}, {From: "c", To: "a"}, {From: "a", To: "d"}, {From: "d", To: "d"}}
	col := layers(nodes, edges)
	want := map[string]int{"a": 0, "b": 1, "c": 2, "d": 1}
	for n, c := range want {
		if col[n] != c {
			t.Errorf("%s in layer %d, want %d (all: %v)", n, col[n], c, col)
		}
	}
}

// Parallel relations between two concepts become one arrow with both
// labels, styled as the weightiest.
func TestMergeEdges(t *testing.T) {
	got := mergeEdges([]drawEdge{
		{From: "a", To: "b", Label: "REQUIRES", Class: "edge"},
		{From: "a", To: "b", Label: "APPLIES_TO", Class: "edge applies policy"},
		{From: "b", To: "a", Label: "DEPENDS_ON", Class: "edge"},
	})
	if len(got) != 2 || got[0].Label != "REQUIRES; APPLIES_TO" || got[0].Class != "edge applies policy" {
		t.Fatalf("merged: %+v", got)
	}
}
