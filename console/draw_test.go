package console

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/grounding"

	"github.com/ewp-go/ewp/warrant"
)

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

// A STALE crossing near now is labelled leftwards from its rule, so the
// label stays inside the chart; one early in the chart runs rightwards.
func TestStaleLabelStaysInsideTheChart(t *testing.T) {
	t0 := instantOf(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	day := instantOf(time.Date(2026, 10, 2, 0, 0, 0, 0, time.UTC)) - t0
	for _, tc := range []struct {
		staleDay int
		anchor   string
	}{{55, `text-anchor="end"`}, {5, `text-anchor="start"`}} {
		at := t0 + day*warrant.Instant(tc.staleDay)
		svg := warrantChart([]segment{{From: t0, To: at, ViewID: "v"}, {From: at, To: t0 + 60*day, ViewID: "v", StaleAt: at}}, nil, t0+60*day)
		i := strings.Index(svg, `class="stale-label"`)
		if i < 0 || !strings.Contains(svg[i:i+80], tc.anchor) {
			t.Errorf("crossing on day %d of 60: want %s on the label, got %q", tc.staleDay, tc.anchor, svg[max(i, 0):min(max(i, 0)+120, len(svg))])
		}
	}
}

// demoGraph is the filesystem demo concept graph with its edge policies
// placed, as the graph page draws it.
func demoGraph(t *testing.T) (*grounding.Graph, []edgepolicy.Orphan) {
	t.Helper()
	doc, err := grounding.DecodeDocument(fixtures.DemoGraph)
	if err != nil {
		t.Fatal(err)
	}
	g0, err := grounding.NewGraph(nil)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := g0.ApplyDocument(doc, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := edgepolicy.Load("filesystem-demo.cedar", fixtures.DemoPolicies)
	if err != nil {
		t.Fatal(err)
	}
	return g, placements(pol)
}

// noLabelOverlaps fails when two edge labels, or a label and a node,
// share any point of the drawing.
func noLabelOverlaps(t *testing.T, what string, nodes []drawNode, edges []drawEdge) {
	t.Helper()
	lay := layoutGraph(nodes, edges)
	var boxes []labelBox
	for _, l := range lay.Labels {
		if len(l.Lines) > 0 {
			boxes = append(boxes, l)
		}
	}
	if len(boxes) == 0 {
		t.Fatalf("%s: no label drawn", what)
	}
	for i := range boxes {
		for j := i + 1; j < len(boxes); j++ {
			if boxes[i].overlaps(boxes[j]) {
				t.Errorf("%s: labels %q and %q overlap", what, boxes[i].Lines, boxes[j].Lines)
			}
		}
		for _, n := range nodes {
			p := lay.Pos[n.Name]
			if boxes[i].overlaps(labelBox{X: float64(p[0]), Y: float64(p[1]), W: nodeW, H: nodeH}) {
				t.Errorf("%s: label %q covers concept %s", what, boxes[i].Lines, n.Name)
			}
		}
		if boxes[i].X < 0 || boxes[i].Y < 0 || boxes[i].X+boxes[i].W > float64(lay.W) || boxes[i].Y+boxes[i].H > float64(lay.H) {
			t.Errorf("%s: label %q (%v,%v %vx%v) outside the %dx%d drawing", what, boxes[i].Lines, boxes[i].X, boxes[i].Y, boxes[i].W, boxes[i].H, lay.W, lay.H)
		}
	}
}

// No two edge labels (nor a label and a concept) overlap: on the demo
// concept graph with its policies (the policy-carrying label was
// unreadable), on its grounding trace, and on a dense graph whose labels
// all want the same spot.
func TestEdgeLabelsNeverOverlap(t *testing.T) {
	g, ps := demoGraph(t)
	nodes, edges, _ := conceptDrawing(g, ps)
	noLabelOverlaps(t, "demo concept graph", nodes, edges)
	var policyLabel bool
	for _, e := range edges {
		policyLabel = policyLabel || strings.Contains(e.Label, "⚖ protected_file")
	}
	if !policyLabel {
		t.Fatal("the demo graph has no label carrying its policies")
	}
	res, err := g.Check([]string{"delete", "file"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tn, te := traceDrawing(res)
	noLabelOverlaps(t, "grounding trace of delete,file", tn, te)
	var dn []drawNode
	var de []drawEdge
	for i := range 6 {
		dn = append(dn, drawNode{Name: fmt.Sprintf("n%d", i)})
	}
	for i := range 6 {
		for j := range 6 {
			if i != j {
				de = append(de, drawEdge{From: dn[i].Name, To: dn[j].Name, Class: "edge applies", Label: fmt.Sprintf("APPLIES_TO D%d→D%d ⚖ a_long_policy_name", i%5, j%5)})
			}
		}
	}
	noLabelOverlaps(t, "dense graph", dn, de)
	// The largest graph drawn: maxDrawn concepts, four labelled edges each.
	dn, de = nil, nil
	for i := range maxDrawn {
		dn = append(dn, drawNode{Name: fmt.Sprintf("c%03d", i)})
	}
	for i := range maxDrawn {
		for k := 1; k <= 4; k++ {
			j := (i*7 + k*13) % maxDrawn
			if j != i {
				de = append(de, drawEdge{From: dn[i].Name, To: dn[j].Name, Class: "edge applies", Label: fmt.Sprintf("APPLIES_TO D%d→D%d", k%5, (k+1)%5)})
			}
		}
	}
	start := time.Now()
	noLabelOverlaps(t, "150 concepts", dn, de)
	t.Logf("150 concepts, %d edges laid out in %v", len(de), time.Since(start))
}

// A policy label keeps its policies on a line of their own.
func TestLabelLines(t *testing.T) {
	got := labelLines("REQUIRES D1→D1; APPLIES_TO D3→D2 ⚖ protected_file, bulk_delete")
	want := []string{"REQUIRES D1→D1", "APPLIES_TO D3→D2", "⚖ protected_file, bulk_delete"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
}
