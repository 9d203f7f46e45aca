package schemas

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A mistyped key is found at any depth, with the known key it is
// closest to; free-form objects are not looked into, and a key far from
// every known one gets no suggestion.
func TestUnknownMembers(t *testing.T) {
	doc, err := Decode([]byte(`{"proposition_id": "P", "asertions": [],
		"evidence": [{"evidence_id": "e1", "polarity": "supports", "content": "c", "observed_at": "t",
			"source": {"source_id": "s", "orign_type": "tool"}}],
		"adapter_meta": {"anything": 1}, "checks": [{"method": {"free": "form"}, "zzzzzzzzzzzz": 1}],
		"evaluated_at": "2026-01-01T00:00:00Z", "Subjects": ["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnknownMembers(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []Unknown{
		{Pointer: "/Subjects", Key: "Subjects", Nearest: "subjects"},
		{Pointer: "/asertions", Key: "asertions", Nearest: "assertions"},
		{Pointer: "/checks/0/zzzzzzzzzzzz", Key: "zzzzzzzzzzzz"},
		{Pointer: "/evidence/0/source/orign_type", Key: "orign_type", Nearest: "origin_type"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// Every view of the project's pack uses only the names the schemas
// know: the walk follows every $ref the published schemas use.
func TestPackViewsHaveNoUnknownMembers(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "fixtures", "pack", "fixtures", "*.json"))
	if len(files) == 0 {
		t.Fatal("no fixtures in ../fixtures/pack/fixtures")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		if u, err := UnknownMembers(doc); err != nil || len(u) > 0 {
			t.Errorf("%s: %+v %v", f, u, err)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"asertions", "assertions", 1}, {"kitten", "sitting", 3}, {"évidence", "evidence", 1}} {
		if d := editDistance(c.a, c.b); d != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}
