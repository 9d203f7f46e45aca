package grounding

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func benchCheck(b *testing.B, g *Graph, query []string) {
	b.Helper()
	var r Result
	for b.Loop() {
		var err error
		if r, err = g.Check(query, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(r.Trace.Result.Primitives)), "frontier")
	b.ReportMetric(float64(len(r.Trace.Result.Pathway)), "steps")
}

// The §6.1 demo graph from the pack, 3-concept query.
func BenchmarkCheckPackFilesystem(b *testing.B) {
	benchCheck(b, packGraph(b, "filesystem"), []string{"copy", "file", "directory"})
}

func BenchmarkCheckDemoFilesystem(b *testing.B) {
	benchCheck(b, demoGraph(b), []string{"delete", "file", "directory"})
}

// largeGraph is 10,000 primitives with D0..D3 and three relata each: a
// REQUIRES tree (fan-in 4), a DEPENDS_ON to a recent earlier node and an
// APPLIES_TO anywhere. The closure of a late node is large, which makes
// this a heavy case rather than a flattering one.
func largeGraph(b *testing.B, n int) *Graph {
	rng := rand.New(rand.NewPCG(1, 2))
	name := func(i int) string { return fmt.Sprintf("concept_%05d", i) }
	prims := make([]Primitive, n)
	for i := range prims {
		var d1, d2, d3 []Relatum
		if i > 0 {
			d1 = []Relatum{rel(Requires, name((i-1)/4), 1)}
			d2 = []Relatum{rel(DependsOn, name(max(0, i-1-rng.IntN(200))), 1)}
		}
		if j := rng.IntN(n); j != i && j < i {
			d3 = []Relatum{rel(AppliesTo, name(j), 2)}
		}
		prims[i] = prim(name(i), dep(0), dep(1, d1...), dep(2, d2...), dep(3, d3...))
	}
	g, err := NewGraph(prims)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func BenchmarkCheckLarge10k(b *testing.B) {
	g := largeGraph(b, 10_000)
	benchCheck(b, g, []string{"concept_09999", "concept_05000", "concept_00042"})
}

func BenchmarkNewGraph10k(b *testing.B) {
	for b.Loop() {
		largeGraph(b, 10_000)
	}
}
