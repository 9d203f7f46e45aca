package grounding

import (
	"testing"
)

// TestPackCases runs all 77 vre-pack cases in memory.
func TestPackCases(t *testing.T) {
	cases, err := DecodeCases(readShared(t, "vre-pack/cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 77 {
		t.Fatalf("cases.json has %d cases, want 77", len(cases))
	}
	named := map[string]*Graph{"filesystem": packGraph(t, "filesystem"), "gaps": packGraph(t, "gaps")}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			g := named[c.NamedGraph()]
			if g == nil {
				g = graphFrom(t, c.Graph)
			}
			got := mustCheck(t, g, c.Query, c.MinDepth)
			for _, m := range CompareCase(c.Expect, got) {
				t.Error(m)
			}
		})
	}
}
