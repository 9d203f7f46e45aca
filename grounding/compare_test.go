package grounding

import (
	"encoding/json"
	"strings"
	"testing"
)

// CompareCase must be able to fail on every field it compares; otherwise
// the pack run would prove nothing.
func TestCompareCaseDetectsMismatches(t *testing.T) {
	g := mustGraph(t, prim("b", dep(0), dep(1)), prim("c", dep(0), dep(1)),
		prim("a", dep(0), dep(1, rel(Requires, "b", 2), rel(Requires, "c", 3))))
	got := mustCheck(t, g, []string{"A", "ghost"}, nil)
	base := `{"grounded":false,"resolved":["a","ghost"],"gap_order":"exact",
	  "gaps":[{"kind":"EXISTENCE","primitive":"ghost"},
	          {"kind":"RELATIONAL","source":"a","target":"b","required_depth":2,"current_depth":1,"missing_levels":[2]},
	          {"kind":"RELATIONAL","source":"a","target":"c","required_depth":3,"current_depth":1,"missing_levels":[2,3]}],
	  "primitives":["a","b","c","ghost"],"pathway_length":2}`
	if m := CompareCase(parseExpect(t, base), got); len(m) != 0 {
		t.Fatalf("baseline mismatches: %v", m)
	}
	mutations := map[string][2]string{
		"grounded":       {`"grounded":false`, `"grounded":true`},
		"resolved":       {`"resolved":["a","ghost"]`, `"resolved":["A","ghost"]`},
		"gap field":      {`"required_depth":2`, `"required_depth":3`},
		"gap count":      {`{"kind":"EXISTENCE","primitive":"ghost"},`, ``},
		"gap order":      {`"gap_order":"exact"`, `"gap_order":"sideways"`},
		"primitives":     {`"primitives":["a","b","c","ghost"]`, `"primitives":["a","b","ghost"]`},
		"pathway_length": {`"pathway_length":2`, `"pathway_length":3`},
		"absent":         {`"pathway_length":2`, `"pathway_length":2,"absent_from_trace":["c"]`},
		"unknown field":  {`"pathway_length":2`, `"pathway_length":2,"pathway_len":2`},
	}
	for name, m := range mutations {
		exp := strings.Replace(base, m[0], m[1], 1)
		if exp == base {
			t.Fatalf("%s: mutation did not apply", name)
		}
		if mm := CompareCase(parseExpect(t, exp), got); len(mm) == 0 {
			t.Errorf("%s: mutation went unnoticed", name)
		}
	}
}

func TestCompareCaseByKind(t *testing.T) {
	g := mustGraph(t, prim("b", dep(0), dep(1)), prim("c", dep(0), dep(1)),
		prim("a", dep(0), dep(1, rel(Requires, "b", 2), rel(Requires, "c", 3))))
	got := mustCheck(t, g, []string{"a"}, nil)
	swapped := `{"grounded":false,"gap_order":"by_kind","gaps":[
	  {"kind":"RELATIONAL","source":"a","target":"c","required_depth":3},
	  {"kind":"RELATIONAL","source":"a","target":"b","required_depth":2}]}`
	if m := CompareCase(parseExpect(t, swapped), got); len(m) != 0 {
		t.Fatalf("by_kind should ignore order within a kind: %v", m)
	}
	if m := CompareCase(parseExpect(t, strings.Replace(swapped, "by_kind", "exact", 1)), got); len(m) == 0 {
		t.Fatal("exact should see the swapped order")
	}
	dup := strings.Replace(swapped, `"target":"c","required_depth":3`, `"target":"b","required_depth":2`, 1)
	if m := CompareCase(parseExpect(t, dup), got); len(m) == 0 {
		t.Fatal("multiset comparison matched one actual gap twice")
	}
	// Phase order is enforced for by_kind too.
	got.Gaps = append(got.Gaps, newExistenceGap("late"))
	exp := strings.Replace(swapped, `"gaps":[`, `"gaps":[{"kind":"EXISTENCE","primitive":"late"},`, 1)
	if m := CompareCase(parseExpect(t, exp), got); len(m) == 0 {
		t.Fatal("EXISTENCE after RELATIONAL went unnoticed")
	}
}

func parseExpect(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
