package grounding

import (
	"fmt"
	"reflect"
)

var phases = []string{"EXISTENCE", "DEPTH", "RELATIONAL", "REACHABILITY"}

var phaseRank = map[string]int{"EXISTENCE": 0, "DEPTH": 1, "RELATIONAL": 2, "REACHABILITY": 3}

// compareGaps implements "Comparing gaps" of vre-pack/README.md.
func compareGaps(expect, res map[string]any) []string {
	want, got := asList(expect["gaps"]), asList(res["gaps"])
	switch expect["gap_order"] {
	case "exact", nil:
		return compareGapsExact(want, got)
	case "by_kind":
		return compareGapsByKind(want, got)
	}
	return []string{fmt.Sprintf("gap_order: unknown value %s", show(expect["gap_order"]))}
}

func compareGapsExact(want, got []any) []string {
	if len(want) != len(got) {
		return []string{fmt.Sprintf("gaps: want %d %s, got %d %s", len(want), show(want), len(got), show(got))}
	}
	var out []string
	for i := range want {
		if !gapMatches(want[i], got[i]) {
			out = append(out, fmt.Sprintf("gaps[%d]: want %s, got %s", i, show(want[i]), show(got[i])))
		}
	}
	return out
}

// compareGapsByKind: the actual gaps are in phase order, and per kind the
// actual gaps equal the expected ones as a multiset.
func compareGapsByKind(want, got []any) []string {
	var out []string
	last := -1
	for i, g := range got {
		r, ok := phaseRank[fmt.Sprint(asMap(g)["kind"])]
		if !ok || r < last {
			out = append(out, fmt.Sprintf("gaps[%d]: %s is out of phase order", i, show(g)))
		}
		last = max(last, r)
	}
	for _, kind := range phases {
		w, g := ofKind(want, kind), ofKind(got, kind)
		if !multisetMatch(w, g) {
			out = append(out, fmt.Sprintf("gaps of kind %s: want %s, got %s", kind, show(w), show(g)))
		}
	}
	return out
}

func ofKind(gaps []any, kind string) []any {
	var out []any
	for _, g := range gaps {
		if asMap(g)["kind"] == kind {
			out = append(out, g)
		}
	}
	return out
}

// multisetMatch pairs each expected gap with a distinct actual gap.
func multisetMatch(want, got []any) bool {
	if len(want) != len(got) {
		return false
	}
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for j, g := range got {
			if !used[j] && gapMatches(w, g) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// gapMatches: every field the expected gap gives must be equal.
func gapMatches(want, got any) bool {
	gm := asMap(got)
	for k, v := range asMap(want) {
		gv, ok := gm[k]
		if !ok || !reflect.DeepEqual(v, gv) {
			return false
		}
	}
	return true
}
