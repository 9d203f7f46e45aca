package console

import (
	"strings"
	"testing"
	"time"

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
