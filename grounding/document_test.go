package grounding

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDecodeDocumentErrors(t *testing.T) {
	const ok = `{"name":"path","depths":[{"level":0},{"level":1,"properties":{"d":"x"}}]}`
	doc := func(prims ...string) string {
		return `{"graph":"t","primitives":[` + strings.Join(prims, ",") + `]}`
	}
	cases := []struct {
		name, data, rule, primitive string
		depth                       int
		path                        string
	}{
		{"syntax", `{"graph":`, RuleSyntax, "", -1, "$"},
		{"not object", `[]`, RuleSyntax, "", -1, "$"},
		{"unknown top field", `{"graph":"t","primitives":[],"nodes":[]}`, RuleUnknownField, "", -1, "nodes"},
		{"graph name", `{"primitives":[]}`, RuleGraphNameAbsent, "", -1, "graph"},
		{"primitives missing", `{"graph":"t"}`, RuleMissingField, "", -1, "primitives"},
		{"name missing", doc(`{"depths":[]}`), RuleMissingField, "", -1, "primitives[0].name"},
		{"name empty", doc(ok, `{"name":""}`), RuleEmptyName, "", -1, "primitives[1].name"},
		{"unknown primitive field", doc(`{"name":"a","level":0}`), RuleUnknownField, "", -1, "primitives[0].level"},
		{"level above 4", doc(`{"name":"a","depths":[{"level":0},{"level":5}]}`), RuleLevelRange, "a", -1, "primitives[0].depths[1].level"},
		{"level negative", doc(`{"name":"a","depths":[{"level":-1}]}`), RuleLevelRange, "a", -1, "primitives[0].depths[0].level"},
		{"level not integer", doc(`{"name":"a","depths":[{"level":"1"}]}`), RuleSyntax, "a", -1, "primitives[0].depths[0].level"},
		{"level missing", doc(`{"name":"a","depths":[{"properties":{}}]}`), RuleLevelMissing, "a", -1, "primitives[0].depths[0].level"},
		{"duplicate level", doc(`{"name":"a","depths":[{"level":0},{"level":1,"properties":{"d":1}},{"level":1,"properties":{"d":2}}]}`), RuleDuplicateLevel, "a", 1, "primitives[0].depths[2]"},
		{"descending levels", doc(`{"name":"a","depths":[{"level":2,"properties":{"d":1}},{"level":0}]}`), RuleLevelOrder, "a", 0, "primitives[0].depths[1]"},
		{"properties not object", doc(`{"name":"a","depths":[{"level":1,"properties":[1]}]}`), RuleSyntax, "a", 1, "primitives[0].depths[0].properties"},
		{"unknown relation type", doc(ok, `{"name":"a","depths":[{"level":0},{"level":1,"relata":[{"type":"CAUSES","target":"path","target_depth":1}]}]}`), RuleRelationType, "a", 1, "primitives[1].depths[1].relata[0].type"},
		{"relation type missing", doc(`{"name":"a","depths":[{"level":1,"relata":[{"target":"a","target_depth":1}]}]}`), RuleTypeMissing, "a", 1, "primitives[0].depths[0].relata[0].type"},
		{"target missing", doc(`{"name":"a","depths":[{"level":1,"relata":[{"type":"REQUIRES","target_depth":1}]}]}`), RuleTargetMissing, "a", 1, "primitives[0].depths[0].relata[0].target"},
		{"target depth range", doc(ok, `{"name":"a","depths":[{"level":1,"relata":[{"type":"REQUIRES","target":"path","target_depth":9}]}]}`), RuleLevelRange, "a", 1, "primitives[1].depths[0].relata[0].target_depth"},
		{"target depth missing", doc(`{"name":"a","depths":[{"level":1,"relata":[{"type":"REQUIRES","target":"path"}]}]}`), RuleTargetDepth, "a", 1, "primitives[0].depths[0].relata[0].target_depth"},
		{"relation_type typo", doc(`{"name":"a","depths":[{"level":1,"relata":[{"relation_type":"REQUIRES","target":"path","target_depth":1}]}]}`), RuleUnknownField, "a", 1, "primitives[0].depths[0].relata[0].relation_type"},
		{"duplicate folded names", doc(`{"name":"Straße","depths":[{"level":0}]}`, ok, `{"name":"STRASSE","depths":[{"level":0}]}`), RuleDuplicateName, "STRASSE", -1, "primitives[2].name"},
		{"self reference", doc(`{"name":"a","depths":[{"level":0},{"level":2,"relata":[{"type":"DEPENDS_ON","target":"A","target_depth":1}]}]}`), RuleSelfReference, "a", 2, "primitives[0].depths[1].relata[0]"},
		{"cycle", doc(
			`{"name":"a","depths":[{"level":1,"relata":[{"type":"REQUIRES","target":"b","target_depth":1}]}]}`,
			`{"name":"b","depths":[{"level":3,"relata":[{"type":"APPLIES_TO","target":"z","target_depth":1},{"type":"CONSTRAINED_BY","target":"a","target_depth":1}]}]}`),
			RuleCycle, "a", 1, "primitives[0].depths[0].relata[0]"},
		{"synthetic provenance", doc(`{"name":"a","provenance":"synthetic","depths":[]}`), RuleSyntheticIngest, "a", -1, "primitives[0].provenance"},
		{"unknown provenance", doc(`{"name":"a","provenance":"conversational","depths":[]}`), RuleProvenance, "a", -1, "primitives[0].provenance"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := DecodeDocument([]byte(c.data))
			if d != nil {
				t.Fatal("a document was returned with the error")
			}
			var ge *GraphError
			if !errors.As(err, &ge) {
				t.Fatalf("err = %v, want *GraphError", err)
			}
			if ge.Rule != c.rule || ge.Primitive != c.primitive || ge.Depth != c.depth || ge.Path != c.path {
				t.Fatalf("got %s %q %d %q (%v); want %s %q %d %q", ge.Rule, ge.Primitive, ge.Depth, ge.Path, err, c.rule, c.primitive, c.depth, c.path)
			}
			if !strings.HasPrefix(err.Error(), c.path) {
				t.Fatalf("message %q does not start with the path", err)
			}
		})
	}
}

func TestDecodeDocumentAcceptsPackShapes(t *testing.T) {
	d, err := DecodeDocument([]byte(`{"graph":"g","primitives":[
		{"name":"a","provenance":"authored","depths":[{"level":0},{"level":1,"properties":{},"relata":[{"type":"INCLUDES","target":"elsewhere","target_depth":0,"metadata":{"k":"v"}}]}]},
		{"name":"b","depths":[]}, {"name":"c"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Primitives) != 3 || d.Primitives[0].Depths[1].Relata[0].Target != "elsewhere" || d.Primitives[0].Depths[1].Relata[0].Metadata["k"] != "v" {
		t.Fatalf("decoded %+v", d)
	}
}

const twoDoc = `{"graph":"g","primitives":[
 {"name":"path","depths":[{"level":0},{"level":1,"properties":{"d":"p"}}]},
 {"name":"File","depths":[{"level":0},{"level":1,"properties":{"d":"f"},"relata":[{"type":"REQUIRES","target":"PATH","target_depth":1}]}]}]}`

func decodeDoc(t *testing.T, s string) *Document {
	t.Helper()
	d, err := DecodeDocument([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestApplyDocumentAssignsDeterministicIDsAndProvenance(t *testing.T) {
	g, revs, err := (&Graph{}).ApplyDocument(decodeDoc(t, twoDoc), t0.In(time.FixedZone("x", 3600)))
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 2 || g.Len() != 2 {
		t.Fatalf("revisions %d, graph %d", len(revs), g.Len())
	}
	// uuid5(namespace, "file") computed by CPython's uuid module.
	if revs[1].ID != "532e34b8-1683-5fbc-9025-ccb0079b6a6b" || revs[1].Name != "File" {
		t.Fatalf("file revision = %s %q", revs[1].ID, revs[1].Name)
	}
	if revs[1].Depths[1].Relata[0].TargetID != revs[0].ID {
		t.Fatal("relatum not resolved to path's id")
	}
	for _, p := range []Provenance{revs[1].Provenance, revs[1].Depths[0].Provenance, revs[1].Depths[1].Relata[0].Provenance} {
		if p.Source != Authored || !p.CreatedAt.Equal(t0) || p.CreatedAt.Location() != time.UTC {
			t.Fatalf("provenance = %+v, want authored at t0 UTC", p)
		}
	}
}

func TestApplyDocumentRevisesExistingByFoldedName(t *testing.T) {
	g, _, err := (&Graph{}).ApplyDocument(decodeDoc(t, twoDoc), t0)
	if err != nil {
		t.Fatal(err)
	}
	later := t0.Add(time.Hour)
	again, revs, err := g.ApplyDocument(decodeDoc(t, twoDoc), later)
	if err != nil || len(revs) != 0 || again.Len() != 2 {
		t.Fatalf("re-ingest: err=%v revisions=%d len=%d, want a no-op", err, len(revs), again.Len())
	}
	upd := `{"graph":"g","provenance":"learned","primitives":[{"name":"FILE","depths":[{"level":0},{"level":1,"properties":{"d":"f"},"relata":[{"type":"REQUIRES","target":"path","target_depth":1}]},{"level":2,"properties":{"d":"new"}}]}]}`
	g2, revs, err := g.ApplyDocument(decodeDoc(t, upd), later)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := g.ByName("file")
	if len(revs) != 1 || revs[0].ID != old.ID || revs[0].Name != "FILE" {
		t.Fatalf("revision %+v, want existing id %s renamed FILE", revs, old.ID)
	}
	p := revs[0].Provenance
	if p.Source != Learned || !p.CreatedAt.Equal(t0) || !p.UpdatedAt.Equal(later) {
		t.Fatalf("node provenance %+v, want learned, created t0, updated later", p)
	}
	if d := revs[0].Depths[1]; !d.Provenance.CreatedAt.Equal(t0) || d.Provenance.Source != Authored {
		t.Fatalf("unchanged-content depth lost its genealogy? %+v", d.Provenance)
	}
	if d := revs[0].Depths[2]; d.Provenance.Source != Learned || !d.Provenance.CreatedAt.Equal(later) {
		t.Fatalf("new depth provenance %+v", d.Provenance)
	}
	if got, _ := g2.ByName("file"); len(got.Depths) != 3 {
		t.Fatal("graph not updated")
	}
}

func TestApplyDocumentResolvesAgainstGraphAndIsWholeOrNothing(t *testing.T) {
	g, _, err := (&Graph{}).ApplyDocument(decodeDoc(t, twoDoc), t0)
	if err != nil {
		t.Fatal(err)
	}
	ok := `{"graph":"h","primitives":[{"name":"read","depths":[{"level":0},{"level":2,"relata":[{"type":"APPLIES_TO","target":"file","target_depth":2}]}]}]}`
	if _, revs, err := g.ApplyDocument(decodeDoc(t, ok), t0); err != nil || len(revs) != 1 {
		t.Fatalf("name in graph only: err=%v revs=%d", err, len(revs))
	}
	bad := `{"graph":"h","primitives":[
		{"name":"read","depths":[{"level":0}]},
		{"name":"write","depths":[{"level":0},{"level":2,"relata":[{"type":"APPLIES_TO","target":"fiel","target_depth":2}]}]}]}`
	g2, revs, err := g.ApplyDocument(decodeDoc(t, bad), t0)
	if g2 != nil || revs != nil {
		t.Fatal("partial result returned with an error")
	}
	var ge *GraphError
	if !errors.As(err, &ge) || ge.Rule != RuleUnknownTarget || ge.Path != "primitives[1].depths[1].relata[0].target" || !strings.Contains(err.Error(), "fiel") {
		t.Fatalf("err = %v", err)
	}
	if _, found := g.ByName("read"); found {
		t.Fatal("receiver graph changed")
	}
	// A cycle that needs the existing graph is caught at apply time, with
	// the document's path.
	cyc := `{"graph":"h","primitives":[{"name":"path","depths":[{"level":0},{"level":1,"properties":{"d":"p"},"relata":[{"type":"DEPENDS_ON","target":"File","target_depth":0}]}]}]}`
	_, _, err = g.ApplyDocument(decodeDoc(t, cyc), t0)
	if !errors.As(err, &ge) || ge.Rule != RuleCycle || ge.Path != "primitives[0].depths[1].relata[0]" {
		t.Fatalf("err = %v", err)
	}
}

func TestApplyDocumentRejectsGoBuiltInvalidDocument(t *testing.T) {
	d := &Document{Graph: "g", Primitives: []DocPrimitive{{Name: "a", Depths: []DocDepth{{Level: 9}}}}}
	_, _, err := (&Graph{}).ApplyDocument(d, t0)
	var ge *GraphError
	if !errors.As(err, &ge) || ge.Rule != RuleLevelRange || ge.Path != "primitives[0].depths[0]" {
		t.Fatalf("err = %v", err)
	}
}
