package edgepolicy

import (
	"fmt"
	"strings"
	"testing"
)

// benchTrace is a 14-edge trace shaped like the filesystem demo's: a few
// operations applying to file-system objects at D2..D4.
func benchTrace() []Edge {
	sources := []string{"delete", "write", "read", "create", "move", "copy", "list"}
	targets := []string{"file", "directory"}
	var edges []Edge
	for _, s := range sources {
		for _, t := range targets {
			edges = append(edges, Edge{Source: s, Target: t, SourceDepth: 3, TargetDepth: 2})
		}
	}
	return edges
}

// benchPolicies places ten policies on edges of the trace, mixing
// unconditional ones, pattern tests and record lookups, with and without
// confirmation and cardinality filters.
func benchPolicies() string {
	conds := []string{
		`context.arguments.path like "/etc/*"`,
		`context.arguments.path like "protected*"`,
		`context.arguments.opts.recursive`,
		`context.arguments.size > 1000000`,
		`principal == Agent::"untrusted"`,
	}
	var b strings.Builder
	edges := benchTrace()
	for i := range 10 {
		e := edges[i%len(edges)]
		extra := ""
		if i%2 == 0 {
			extra = `@confirm("Needs a human.")`
		}
		if i%3 == 0 {
			extra += ` @cardinality("multiple")`
		}
		b.WriteString(forbidPolicy(fmt.Sprintf("p%d", i), e.Source, e.Target, e.SourceDepth, extra, conds[i%len(conds)]))
	}
	return b.String()
}

func BenchmarkEvaluate(b *testing.B) {
	s := mustLoad(b, benchPolicies())
	edges := benchTrace()
	req := Request{AgentID: "agent-1", ToolName: "fs_op", Cardinality: "single", Arguments: map[string]any{
		"path": "/home/u/report.txt", "size": 2048.0, "opts": map[string]any{"recursive": false, "mode": "0644"},
	}}
	if n := len(s.Evaluate(edges, req)); n != 0 {
		b.Fatalf("benchmark request should pass every policy, got %d violations", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Evaluate(edges, req)
	}
}

func BenchmarkEvaluateAllFire(b *testing.B) {
	s := mustLoad(b, benchPolicies())
	edges := benchTrace()
	// Type errors and missing attributes make most conditions unevaluable.
	req := Request{AgentID: "untrusted", ToolName: "fs_op", Arguments: map[string]any{"path": 7.0}}
	if n := len(s.Evaluate(edges, req)); n != 10 {
		b.Fatalf("want all 10 policies to fire, got %d", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Evaluate(edges, req)
	}
}
