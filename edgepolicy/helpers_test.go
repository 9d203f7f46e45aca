package edgepolicy

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// stubGraph is a concept graph reduced to what placement needs, folding
// names the way the real repository does.
type stubGraph struct {
	prims map[string]bool
	edges map[edgeKey]bool
}

func newStubGraph(prims ...string) *stubGraph {
	g := &stubGraph{prims: map[string]bool{}, edges: map[edgeKey]bool{}}
	for _, p := range prims {
		g.prims[fold(p)] = true
	}
	return g
}

func (g *stubGraph) appliesTo(src, tgt string, depth int) *stubGraph {
	g.edges[edgeKey{fold(src), fold(tgt), depth}] = true
	return g
}

func (g *stubGraph) HasPrimitive(name string) bool { return g.prims[fold(name)] }

func (g *stubGraph) HasAppliesTo(src, tgt string, depth int) bool {
	return g.edges[edgeKey{fold(src), fold(tgt), depth}]
}

// forbidPolicy writes one placed forbid policy; extra holds further
// annotations, cond the when-clause body ("" for none).
func forbidPolicy(id, src, tgt string, depth int, extra, cond string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "@id(%q) @source(%q) @target(%q) @source_depth(\"%d\") %s\n", id, src, tgt, depth, extra)
	b.WriteString("forbid (principal, action, resource)")
	if cond != "" {
		fmt.Fprintf(&b, "\nwhen { %s }", cond)
	}
	b.WriteString(";\n")
	return b.String()
}

func mustLoad(t testing.TB, src string) *Set {
	t.Helper()
	s, err := Load("test.cedar", []byte(src))
	if err != nil {
		t.Fatalf("Load: %v\n--- source ---\n%s", err, src)
	}
	return s
}

// loadErrors flattens the joined error of Load into its LoadErrors.
func loadErrors(t *testing.T, err error) []*LoadError {
	t.Helper()
	if err == nil {
		t.Fatal("Load succeeded, want an error")
	}
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	out := make([]*LoadError, 0, len(list))
	for _, e := range list {
		var le *LoadError
		if !errors.As(e, &le) {
			t.Fatalf("error %q is not a *LoadError", e)
		}
		out = append(out, le)
	}
	return out
}

func policyIDs(vs []Violation) []string {
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.PolicyID
	}
	return ids
}

var (
	deleteFileD3 = Edge{Source: "delete", Target: "file", SourceDepth: 3, TargetDepth: 2}
	writeFileD3  = Edge{Source: "write", Target: "file", SourceDepth: 3, TargetDepth: 2}
)
