package grounding

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzDecodeDocument(f *testing.F) {
	if demo, err := os.ReadFile(filepath.Join("..", "fixtures", "graphs", "filesystem-demo.json")); err == nil {
		f.Add(demo)
	}
	f.Add([]byte(twoDoc))
	f.Add([]byte(`{"graph":"g","primitives":[{"name":"a","depths":[{"level":0},{"level":1,"relata":[{"type":"REQUIRES","target":"a","target_depth":1}]}]}]}`))
	f.Add([]byte(`{"graph":"g","primitives":[{"name":"x","depths":[{"level":4,"properties":{"n":1e400}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := DecodeDocument(data)
		if err != nil {
			var ge *GraphError
			if !errors.As(err, &ge) || ge.Rule == "" {
				t.Fatalf("error without a rule: %v", err)
			}
			return
		}
		g, _, err := (&Graph{}).ApplyDocument(doc, t0)
		if err != nil {
			// Only names outside the document can fail once decoding passed.
			var ge *GraphError
			if !errors.As(err, &ge) || ge.Rule != RuleUnknownTarget {
				t.Fatalf("decoded document failed to apply: %v", err)
			}
			return
		}
		checkInvariants(t, g, g.Names(), nil)
	})
}

func FuzzCheck(f *testing.F) {
	g := demoGraph(f)
	f.Add("delete,file", int8(-1))
	f.Add("DELETE,File,delete,ghost", int8(3))
	f.Add("read,protected_path,user,Straße", int8(4))
	f.Add("", int8(0))
	f.Fuzz(func(t *testing.T, joined string, md int8) {
		var concepts []string
		if joined != "" {
			concepts = strings.Split(joined, ",")
		}
		var minDepth *int
		if md >= 0 {
			minDepth = intp(int(md) % 5)
		}
		checkInvariants(t, g, concepts, minDepth)
	})
}

// checkInvariants holds for any graph and query.
func checkInvariants(t *testing.T, g *Graph, concepts []string, minDepth *int) {
	r, err := g.Check(concepts, minDepth)
	if err != nil {
		t.Fatal(err)
	}
	if r.Grounded != (len(concepts) > 0 && len(r.Gaps) == 0) {
		t.Fatalf("grounded=%v with %d gaps for %d concepts", r.Grounded, len(r.Gaps), len(concepts))
	}
	if len(r.Resolved) != len(concepts) {
		t.Fatalf("resolved %d for %d inputs", len(r.Resolved), len(concepts))
	}
	distinct := map[string]bool{}
	for _, c := range concepts {
		distinct[Fold(c)] = true
	}
	if len(r.Trace.Query.ConceptIDs) != len(distinct) {
		t.Fatalf("%d concept ids for %d distinct concepts", len(r.Trace.Query.ConceptIDs), len(distinct))
	}
	inTrace := map[string]bool{}
	for _, p := range r.Trace.Result.Primitives {
		inTrace[p.Name] = true
		for i, d := range p.Depths {
			if int(d.Level) != i {
				t.Fatalf("%s ships levels beyond its contiguous chain", p.Name)
			}
		}
	}
	for _, s := range r.Trace.Result.Pathway {
		if !inTrace[s.Source] || !inTrace[s.Target] {
			t.Fatalf("pathway step %+v leaves the frontier", s)
		}
	}
	again, _ := g.Check(concepts, minDepth)
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Fatal("Check is not deterministic")
	}
}
