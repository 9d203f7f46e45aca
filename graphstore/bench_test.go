package graphstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/grounding"
)

// treeDocument is n primitives grounded D0–D2, each REQUIRES-ing its
// parent in a binary tree.
func treeDocument(n int) []byte {
	prims := make([]map[string]any, n)
	for i := range prims {
		d1 := map[string]any{"level": 1, "properties": map[string]any{"d": fmt.Sprint("concept ", i)}}
		if i > 0 {
			d1["relata"] = []any{map[string]any{"type": "REQUIRES", "target": fmt.Sprint("n", (i-1)/2), "target_depth": 1}}
		}
		prims[i] = map[string]any{"name": fmt.Sprint("n", i), "depths": []any{map[string]any{"level": 0}, d1,
			map[string]any{"level": 2, "properties": map[string]any{"d": "what it does"}}}}
	}
	b, _ := json.Marshal(map[string]any{"graph": "tree", "primitives": prims})
	return b
}

// BenchmarkReload10k is what the first request after a graph change pays:
// reading and decoding 10,000 current rows into a graph. Requests between
// changes pay only the version query (see BenchmarkCachedGraph).
func BenchmarkReload10k(b *testing.B) {
	l := newLedger(b)
	d, err := grounding.DecodeDocument(treeDocument(10_000))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := graphstore.New(l, clock).Ingest(context.Background(), d); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		rows, err := l.CurrentPrimitives(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := graphstore.Decode(rows); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCachedGraph(b *testing.B) {
	s := graphstore.New(newLedger(b), clock)
	ingest(b, s, twoConcepts)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.Graph(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCatchUp10k is the first read after one primitive of a
// 10,000-primitive graph was revised: the new revision is read and applied
// to the cached graph.
func BenchmarkCatchUp10k(b *testing.B) {
	l := newLedger(b)
	s := graphstore.New(l, clock)
	d, err := grounding.DecodeDocument(treeDocument(10_000))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Ingest(ctx, d); err != nil {
		b.Fatal(err)
	}
	if _, _, err := s.Graph(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ingest(b, s, fmt.Sprintf(`{"graph": "rev", "primitives": [{"name": "n5000", "depths": [{"level": 0},
		  {"level": 1, "properties": {"d": "revision %d"}, "relata": [{"type": "REQUIRES", "target": "n2499", "target_depth": 1}]}]}]}`, i))
		b.StartTimer()
		if _, _, err := s.Graph(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
