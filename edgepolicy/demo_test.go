package edgepolicy

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"slices"
	"testing"
)

const (
	demoPolicies = "../fixtures/policies/filesystem-demo.cedar"
	demoGraph    = "../fixtures/graphs/filesystem-demo.json"
)

func loadDemo(t testing.TB) *Set {
	t.Helper()
	src, err := os.ReadFile(demoPolicies)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load("filesystem-demo.cedar", src)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDemoPoliciesSitOnTheDemoEdges(t *testing.T) {
	g := newStubGraph("delete", "file").appliesTo("delete", "file", 3)
	if o := loadDemo(t).Validate(g); len(o) != 0 {
		t.Fatalf("orphans:\n%s", FormatOrphans(o))
	}
}

func TestDemoScenarios(t *testing.T) {
	s := loadDemo(t)
	cases := []struct {
		name     string
		req      Request
		decision string
		fired    []string
	}{
		{"protected file", rm("protected.txt", "single"), RequireConfirmation, []string{"protected_file"}},
		{"under /etc", rm("/etc/passwd", "single"), Deny, []string{"no_delete_under_etc"}},
		{"ordinary file", rm("/tmp/notes.txt", "single"), MayAct, nil},
		{"several files", rm("/tmp/*.log", "multiple"), RequireConfirmation, []string{"bulk_delete"}},
		{"cardinality unknown", rm("/tmp/notes.txt", ""), RequireConfirmation, []string{"bulk_delete"}},
		{"several under /etc", rm("/etc/x", "multiple"), Deny, []string{"no_delete_under_etc", "bulk_delete"}},
		{"no path", Request{ToolName: "rm", Cardinality: "single"}, Deny, []string{"protected_file", "no_delete_under_etc"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := s.Evaluate([]Edge{deleteFileD3}, c.req)
			if got := policyIDs(vs); !slices.Equal(got, c.fired) {
				t.Fatalf("fired %v, want %v", got, c.fired)
			}
			if d, _ := Decide(vs); d != c.decision {
				t.Fatalf("decision %q, want %q (violations %+v)", d, c.decision, vs)
			}
		})
	}
}

func rm(path, card string) Request {
	return Request{ToolName: "rm", Cardinality: card, Arguments: map[string]any{"path": path}}
}

// TestDemoPoliciesAgainstDemoGraphFile cross-checks the placements against
// the demo graph document once it exists (it is written separately).
func TestDemoPoliciesAgainstDemoGraphFile(t *testing.T) {
	raw, err := os.ReadFile(demoGraph)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("demo graph not present yet")
	}
	if err != nil {
		t.Fatal(err)
	}
	g, err := graphFromDocument(raw)
	if err != nil {
		t.Fatalf("%s: %v", demoGraph, err)
	}
	if o := loadDemo(t).Validate(g); len(o) != 0 {
		t.Fatalf("orphans against %s:\n%s", demoGraph, FormatOrphans(o))
	}
}

// graphFromDocument reads only the parts of the ingest format that
// placement needs: primitive names and the APPLIES_TO relata per depth.
func graphFromDocument(raw []byte) (*stubGraph, error) {
	var doc struct {
		Primitives []struct {
			Name   string `json:"name"`
			Depths []struct {
				Level  int `json:"level"`
				Relata []struct {
					Type   string `json:"type"`
					Target string `json:"target"`
				} `json:"relata"`
			} `json:"depths"`
		} `json:"primitives"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	g := newStubGraph()
	for _, p := range doc.Primitives {
		g.prims[fold(p.Name)] = true
		for _, d := range p.Depths {
			for _, r := range d.Relata {
				if r.Type == "APPLIES_TO" {
					g.appliesTo(p.Name, r.Target, d.Level)
				}
			}
		}
	}
	return g, nil
}
