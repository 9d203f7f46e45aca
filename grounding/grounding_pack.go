package grounding

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// PackCase is one entry of vre-pack/cases.json. Graph is either a JSON
// string naming a pack graph ("filesystem", "gaps") or an inline graph
// document; Expect is compared with CompareCase.
type PackCase struct {
	Name     string          `json:"name"`
	Ref      string          `json:"ref"`
	Graph    json.RawMessage `json:"graph"`
	Query    []string        `json:"query"`
	MinDepth *int            `json:"min_depth"`
	Expect   map[string]any  `json:"expect"`
}

// DecodeCases parses cases.json. It does no I/O; callers read the file.
func DecodeCases(data []byte) ([]PackCase, error) {
	var cases []PackCase
	if err := json.Unmarshal(data, &cases); err != nil {
		return nil, fmt.Errorf("cases: %w", err)
	}
	return cases, nil
}

// NamedGraph is the pack graph the case runs on, or "" for an inline one.
func (c PackCase) NamedGraph() string {
	var name string
	if json.Unmarshal(c.Graph, &name) != nil {
		return ""
	}
	return name
}

// CompareCase compares a check result with a case's expectation following
// vre-pack/README.md: a field is compared only when present; gaps are
// compared in full, either position by position ("exact") or in phase order
// and as a multiset per kind ("by_kind"), each expected gap matching on the
// fields it gives. It returns one line per mismatch; nil means the case
// passes. The result is compared in its JSON form, so a Result decoded from
// an MCP response compares the same as one returned by Check.
func CompareCase(expect map[string]any, got Result) []string {
	raw, err := json.Marshal(got)
	if err != nil {
		return []string{"result does not marshal: " + err.Error()}
	}
	var res map[string]any
	if err := json.Unmarshal(raw, &res); err != nil {
		return []string{"result does not unmarshal: " + err.Error()}
	}
	var out []string
	for _, key := range sortedKeys(expect) {
		if key == "gap_order" {
			continue
		}
		check, ok := comparers[key]
		if !ok {
			out = append(out, fmt.Sprintf("unknown expectation field %q", key))
			continue
		}
		out = append(out, check(expect, res)...)
	}
	return out
}

var comparers = map[string]func(expect, res map[string]any) []string{
	"grounded":          compareField("grounded"),
	"resolved":          compareField("resolved"),
	"gaps":              compareGaps,
	"primitives":        comparePrimitives,
	"pathway_length":    comparePathwayLength,
	"absent_from_trace": compareAbsent,
}

func compareField(key string) func(expect, res map[string]any) []string {
	return func(expect, res map[string]any) []string {
		if !reflect.DeepEqual(expect[key], res[key]) {
			return []string{fmt.Sprintf("%s: want %s, got %s", key, show(expect[key]), show(res[key]))}
		}
		return nil
	}
}

func comparePrimitives(expect, res map[string]any) []string {
	want := stringSet(expect["primitives"])
	got := stringSet(traceNames(res))
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("primitives: want set %s, got %s", show(want), show(got))}
	}
	return nil
}

func comparePathwayLength(expect, res map[string]any) []string {
	want, _ := expect["pathway_length"].(float64)
	got := len(pathway(res))
	if int(want) != got {
		return []string{fmt.Sprintf("pathway_length: want %v, got %d", want, got)}
	}
	return nil
}

// compareAbsent checks trace primitives, every gap name field and both
// ends of every pathway step.
func compareAbsent(expect, res map[string]any) []string {
	seen := map[string]string{}
	for _, n := range traceNames(res) {
		seen[fmt.Sprint(n)] = "trace primitives"
	}
	for _, g := range asList(res["gaps"]) {
		for _, f := range []string{"primitive", "source", "target"} {
			if s, ok := asMap(g)[f].(string); ok {
				seen[s] = "gap " + f
			}
		}
	}
	for _, st := range pathway(res) {
		for _, f := range []string{"source", "target"} {
			if s, ok := asMap(st)[f].(string); ok {
				seen[s] = "pathway " + f
			}
		}
	}
	var out []string
	for _, v := range asList(expect["absent_from_trace"]) {
		n := fmt.Sprint(v)
		if where, ok := seen[fmt.Sprint(n)]; ok {
			out = append(out, fmt.Sprintf("absent_from_trace: %q appears in %s", n, where))
		}
	}
	return out
}

func traceNames(res map[string]any) []any {
	var names []any
	for _, p := range asList(asMap(asMap(res["trace"])["result"])["primitives"]) {
		names = append(names, asMap(p)["name"])
	}
	return names
}

func pathway(res map[string]any) []any {
	return asList(asMap(asMap(res["trace"])["result"])["pathway"])
}

func stringSet(v any) []string {
	var out []string
	for _, x := range asList(v) {
		out = append(out, fmt.Sprint(x))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
