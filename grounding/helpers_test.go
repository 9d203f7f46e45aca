package grounding

import (
	"github.com/ewp-go/ewp/internal/sharedtest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// t0 is the fixed clock of every test; the package never reads a clock.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// sharedDir finds ../shared beside the repository root (the directory

func readShared(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sharedtest.Dir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// graphFrom decodes a document and applies it to an empty graph.
func graphFrom(t testing.TB, data []byte) *Graph {
	t.Helper()
	doc, err := DecodeDocument(data)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	g, _, err := (&Graph{}).ApplyDocument(doc, t0)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return g
}

func packGraph(t testing.TB, name string) *Graph {
	t.Helper()
	return graphFrom(t, readShared(t, filepath.Join("vre-pack", name+".json")))
}

func demoGraph(t testing.TB) *Graph {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "fixtures", "graphs", "filesystem-demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	return graphFrom(t, data)
}

func mustCheck(t testing.TB, g *Graph, concepts []string, minDepth *int) Result {
	t.Helper()
	r, err := g.Check(concepts, minDepth)
	if err != nil {
		t.Fatalf("Check(%q): %v", concepts, err)
	}
	return r
}

func intp(n int) *int { return &n }
