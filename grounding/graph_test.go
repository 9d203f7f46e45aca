package grounding

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func wantGraphError(t *testing.T, err error, rule, primitive string, depth int, path string) {
	t.Helper()
	var ge *GraphError
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v, want *GraphError %s", err, rule)
	}
	if ge.Rule != rule || ge.Primitive != primitive || ge.Depth != depth || ge.Path != path {
		t.Fatalf("got rule=%s primitive=%q depth=%d path=%q (%v); want %s %q %d %q",
			ge.Rule, ge.Primitive, ge.Depth, ge.Path, err, rule, primitive, depth, path)
	}
	if !strings.Contains(err.Error(), primitive) {
		t.Fatalf("message %q does not name %q", err, primitive)
	}
}

func TestApplyRejectsEachRule(t *testing.T) {
	base := mustGraph(t, full("path"))
	withRel := func(r Relatum) Primitive { return prim("file", dep(0), dep(1, r)) }
	badID := full("file")
	badID.ID = "not-a-uuid"
	upperID := full("file")
	upperID.ID = strings.ToUpper(PrimitiveID("file"))
	dupFold := full("PATH")
	dupFold.ID = PrimitiveID("another path")
	noProv := full("file")
	noProv.Depths[2].Provenance = Provenance{}
	cases := []struct {
		name  string
		rev   Primitive
		rule  string
		depth int
		path  string
	}{
		{"id", badID, RuleInvalidID, -1, "[0].id"},
		{"upper-case id", upperID, RuleInvalidID, -1, "[0].id"},
		{"level range", prim("file", dep(0), dep(7)), RuleLevelRange, -1, "[0].depths[1]"},
		{"duplicate level", prim("file", dep(0), dep(1), dep(1)), RuleDuplicateLevel, 1, "[0].depths[2]"},
		{"order", prim("file", dep(0), dep(2), dep(1)), RuleLevelOrder, 1, "[0].depths[2]"},
		{"relation type", withRel(rel("CAUSES", "path", 1)), RuleRelationType, 1, "[0].depths[1].relata[0]"},
		{"target depth", withRel(rel(Requires, "path", 5)), RuleLevelRange, 1, "[0].depths[1].relata[0]"},
		{"unknown target", withRel(rel(Requires, "nowhere", 1)), RuleUnknownTarget, 1, "[0].depths[1].relata[0]"},
		{"self reference", withRel(rel(DependsOn, "file", 1)), RuleSelfReference, 1, "[0].depths[1].relata[0]"},
		{"provenance", noProv, RuleProvenance, 2, "[0].depths[2].provenance"},
		{"duplicate fold", dupFold, RuleDuplicateName, -1, "[0].name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := base.Apply([]Primitive{c.rev})
			if g != nil {
				t.Fatal("a graph was returned with the error")
			}
			prim := c.rev.Name
			wantGraphError(t, err, c.rule, prim, c.depth, c.path)
		})
	}
	if _, err := base.Apply([]Primitive{{ID: PrimitiveID("x"), Provenance: authored}}); err == nil {
		t.Error("empty name accepted")
	}
}

func TestApplyAllowsNonTransitiveLoops(t *testing.T) {
	a := prim("a", dep(0), dep(1, rel(AppliesTo, "a", 1), rel(AppliesTo, "b", 1)))
	b := prim("b", dep(0), dep(1, rel(Includes, "a", 0)))
	if _, err := NewGraph([]Primitive{a, b}); err != nil {
		t.Fatalf("APPLIES_TO/INCLUDES loops must be allowed: %v", err)
	}
}

func TestApplyRejectsCyclesAcrossRevisions(t *testing.T) {
	g := mustGraph(t,
		prim("c", dep(0), dep(1)),
		prim("b", dep(0), dep(1, rel(Requires, "c", 1))),
		prim("a", dep(0), dep(1, rel(DependsOn, "b", 1))),
	)
	// Closing c → a makes a → b → c → a; the blame lands on the revision.
	_, err := g.Apply([]Primitive{prim("c", dep(0), dep(1), dep(2, rel(ConstrainedBy, "a", 1)))})
	wantGraphError(t, err, RuleCycle, "c", 2, "[0].depths[2].relata[0]")
	for _, n := range []string{"a", "b", "c"} {
		if !strings.Contains(err.Error(), "'"+n+"'") && !strings.Contains(err.Error(), n) {
			t.Errorf("cycle message %q does not show %s", err, n)
		}
	}
	// The same loop submitted in one batch is found too.
	_, err = NewGraph([]Primitive{
		prim("x", dep(0), dep(1, rel(Requires, "y", 1))),
		prim("y", dep(0), dep(1, rel(Requires, "x", 1))),
	})
	wantGraphError(t, err, RuleCycle, "x", 1, "[0].depths[1].relata[0]")
}

func TestApplyIsImmutableAndKeepsInsertionOrder(t *testing.T) {
	g1 := mustGraph(t, full("b"), full("a"))
	g2, err := g1.Apply([]Primitive{prim("b", dep(0)), full("c")})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := g1.ByName("b"); len(p.Depths) != 4 {
		t.Fatalf("old snapshot changed: b has %d depths", len(p.Depths))
	}
	if p, _ := g2.ByName("b"); len(p.Depths) != 1 {
		t.Fatalf("new snapshot: b has %d depths, want 1", len(p.Depths))
	}
	var order []string
	for _, p := range g2.Primitives() {
		order = append(order, p.Name)
	}
	if !slices.Equal(order, []string{"b", "a", "c"}) {
		t.Fatalf("order = %v, want first-insertion order b a c", order)
	}
	// Callers cannot reach into a snapshot through returned values.
	p, _ := g2.ByName("c")
	p.Depths[1].Properties["dummy"] = "changed"
	if q, _ := g2.ByName("c"); q.Depths[1].Properties["dummy"] != "D1" {
		t.Fatal("ByName returned shared state")
	}
}

func TestNewGraphReplaysRevisionsLaterWins(t *testing.T) {
	g := mustGraph(t, prim("a", dep(0)), full("b"), full("a"))
	if g.Len() != 2 {
		t.Fatalf("len = %d", g.Len())
	}
	if p, _ := g.ByID(PrimitiveID("a")); len(p.Depths) != 4 {
		t.Fatalf("later revision did not win: %d depths", len(p.Depths))
	}
	if got := g.Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("names = %v", got)
	}
}

func TestLookups(t *testing.T) {
	g := mustGraph(t, full("Zeta"), full("alpha"), full("Straße"), full("beta"),
		prim("delete", dep(0), dep(1), dep(2), dep(3, rel(AppliesTo, "Zeta", 2))))
	if got := g.Names(); !slices.Equal(got, []string{"alpha", "beta", "delete", "Straße", "Zeta"}) {
		t.Fatalf("names = %v, want case-insensitive order", got)
	}
	if p, ok := g.ByName("STRASSE"); !ok || p.Name != "Straße" {
		t.Fatalf("ByName(STRASSE) = %q %v", p.Name, ok)
	}
	if _, ok := g.ByName("gamma"); ok {
		t.Fatal("ByName found an absent name")
	}
	if !g.HasAppliesTo("DELETE", "zeta", 3) {
		t.Error("HasAppliesTo misses delete→Zeta @D3")
	}
	for _, c := range []struct {
		s, t  string
		depth int
	}{{"delete", "Zeta", 2}, {"Zeta", "delete", 3}, {"delete", "alpha", 3}, {"nope", "Zeta", 3}, {"delete", "nope", 3}} {
		if g.HasAppliesTo(c.s, c.t, c.depth) {
			t.Errorf("HasAppliesTo(%s,%s,%d) = true", c.s, c.t, c.depth)
		}
	}
}
