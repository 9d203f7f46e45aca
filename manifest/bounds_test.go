package manifest

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/schemas"
)

// The bounds the manifest shares with the MCP entrance are the same
// numbers: a call the entrance accepts is not refused here for size, and
// what the manifest records fits what the decision log bounds.
func TestBoundsEqualTheEntrances(t *testing.T) {
	for name, pair := range map[string][2]int{
		"MaxNameBytes = mcp.MaxIDBytes":          {MaxNameBytes, mcp.MaxIDBytes},
		"MaxIDBytes = mcp.MaxIDBytes":            {MaxIDBytes, mcp.MaxIDBytes},
		"MaxConcepts = mcp.MaxConcepts":          {MaxConcepts, mcp.MaxConcepts},
		"MaxArgumentsBytes = mcp.MaxBodyBytes":   {MaxArgumentsBytes, mcp.MaxBodyBytes},
		"MaxPatternBytes = mcp.MaxIDBytes":       {MaxPatternBytes, mcp.MaxIDBytes},
		"MaxListPerRule = mcp.MaxConcepts":       {MaxListPerRule, mcp.MaxConcepts},
		"MaxPropositions = mcp.MaxConcepts (64)": {MaxPropositions, 64},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s: %d != %d", name, pair[0], pair[1])
		}
	}
	if RedactedMarker != mcp.RedactedMarker {
		t.Errorf("marker %q, mcp's %q", RedactedMarker, mcp.RedactedMarker)
	}
}

// The schema says the same bounds as the code.
func TestSchemaBoundsEqualTheCode(t *testing.T) {
	raw, err := schemas.FS.ReadFile("manifest.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs map[string]map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	num := func(def, key string) int {
		v, ok := s.Defs[def][key].(float64)
		if !ok {
			t.Fatalf("$defs/%s/%s is missing", def, key)
		}
		return int(v)
	}
	for name, pair := range map[string][2]int{
		"tools maxItems":         {num("tools", "maxItems"), MaxRules},
		"match maxLength":        {num("match", "maxLength"), MaxPatternBytes},
		"id maxLength":           {num("id", "maxLength"), MaxIDBytes},
		"selector maxLength":     {num("selector", "maxLength"), MaxSelectorBytes},
		"absolutePath maxLength": {num("absolutePath", "maxLength"), MaxPathBytes},
		"concepts maxItems":      {num("concepts", "maxItems"), MaxListPerRule},
		"redact maxItems":        {num("redact", "maxItems"), MaxRedactions},
		"roots maxProperties":    {num("roots", "maxProperties"), MaxRoots},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s: schema %d, code %d", name, pair[0], pair[1])
		}
	}
}

func rulesOf(n int, rule func(i int) string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = rule(i)
	}
	return `{"tools": [` + strings.Join(items, ",") + `]}`
}

func TestManifestBounds(t *testing.T) {
	plain := func(i int) string {
		return fmt.Sprintf(`{"match": "s/t%d", "kind": "k", "risk": "low", "reversible": true}`, i)
	}
	if _, err := Parse([]byte(rulesOf(MaxRules, plain))); err != nil {
		t.Fatalf("%d rules: %v", MaxRules, err)
	}
	_, err := Parse([]byte(rulesOf(MaxRules+1, plain)))
	wantErr(t, err, CodeInvalidManifest, "/tools", "at most 1024")

	long := strings.Repeat("é", MaxPatternBytes/2) // MaxPatternBytes bytes, half the characters
	_, err = Parse([]byte(rulesOf(1, func(int) string {
		return `{"match": "s/` + long + `", "kind": "k", "risk": "low", "reversible": true}`
	})))
	wantErr(t, err, CodeLimitExceeded, "/tools/0/match", fmt.Sprint(MaxPatternBytes))

	longID := strings.Repeat("é", MaxIDBytes/2+1)
	for field, rule := range map[string]string{
		"/tools/0/kind":                  `{"match": "s/t", "kind": "` + longID + `", "risk": "low", "reversible": true}`,
		"/tools/0/concepts/1":            `{"match": "s/t", "kind": "k", "risk": "low", "reversible": true, "concepts": ["a", "` + longID + `"]}`,
		"/tools/0/concepts/0/concepts/0": `{"match": "s/t", "kind": "k", "risk": "low", "reversible": true, "concepts": [{"argument": "p", "matches": "*", "concepts": ["` + longID + `"]}]}`,
		"/tools/0/concepts/0/matches":    `{"match": "s/t", "kind": "k", "risk": "low", "reversible": true, "concepts": [{"argument": "p", "matches": "` + long + `x", "concepts": ["c"]}]}`,
		"/tools/0/redact/0":              `{"match": "s/t", "kind": "k", "risk": "low", "reversible": true, "redact": ["` + strings.Repeat("é", MaxSelectorBytes/2+1) + `"]}`,
		"/tools/0/propositions/0":        `{"match": "s/t", "kind": "k", "risk": "low", "reversible": true, "propositions": ["` + strings.Repeat("é", MaxTemplateBytes/2+1) + `"]}`,
	} {
		t.Run(field, func(t *testing.T) {
			_, err := Parse([]byte(`{"tools": [` + rule + `]}`))
			wantErr(t, err, CodeLimitExceeded, field, `rule "s/t"`)
		})
	}
	tooMany := make([]string, MaxListPerRule+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf(`"c%d"`, i)
	}
	_, err = Parse([]byte(`{"tools": [{"match": "s/t", "kind": "k", "risk": "low", "reversible": true, "concepts": [` + strings.Join(tooMany, ",") + `]}]}`))
	wantErr(t, err, CodeInvalidManifest, "/tools/0/concepts", "at most 64")

	_, err = Parse([]byte(`{"tools": [], "pad": "` + strings.Repeat("x", MaxManifestBytes) + `"}`))
	wantErr(t, err, CodeLimitExceeded, "", fmt.Sprint(MaxManifestBytes))
}

func TestCallBounds(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	// Arguments: size and depth.
	big := `{"a": "` + strings.Repeat("x", MaxArgumentsBytes) + `"}`
	_, err := m.Describe("filesystem/list_directory", json.RawMessage(big))
	wantErr(t, err, CodeLimitExceeded, "/arguments", fmt.Sprint(MaxArgumentsBytes))
	deep := `{"a": ` + strings.Repeat("[", MaxArgumentsDepth) + strings.Repeat("]", MaxArgumentsDepth) + `}`
	_, err = m.Describe("filesystem/list_directory", json.RawMessage(deep))
	wantErr(t, err, CodeLimitExceeded, "/arguments/a"+strings.Repeat("/0", MaxArgumentsDepth-1), fmt.Sprint(MaxArgumentsDepth))
	ok := `{"a": ` + strings.Repeat("[", MaxArgumentsDepth-1) + strings.Repeat("]", MaxArgumentsDepth-1) + `}`
	if _, err := m.Describe("filesystem/list_directory", json.RawMessage(ok)); err != nil {
		t.Errorf("%d levels: %v", MaxArgumentsDepth, err)
	}

	// Paths per call.
	paths := make([]string, MaxPathsPerCall+1)
	for i := range paths {
		paths[i] = "notes.txt"
	}
	_, err = m.Describe("filesystem/read_multiple_files", mustJSON(t, map[string]any{"paths": paths}))
	wantErr(t, err, CodeLimitExceeded, "/arguments/paths", fmt.Sprint(MaxPathsPerCall))
	if _, err := m.Describe("filesystem/read_multiple_files", mustJSON(t, map[string]any{"paths": paths[1:]})); err != nil {
		t.Errorf("%d paths: %v", MaxPathsPerCall, err)
	}

	// A path's length, and a chain of links longer than the kernel follows.
	_, err = m.Describe("filesystem/write_file", mustJSON(t, map[string]any{"path": "/" + strings.Repeat("a", MaxPathBytes)}))
	wantErr(t, err, CodeLimitExceeded, "/arguments/path", fmt.Sprint(MaxPathBytes))
}

func TestCallConceptAndPropositionBounds(t *testing.T) {
	derivs := make([]string, MaxListPerRule)
	for i := range derivs {
		derivs[i] = fmt.Sprintf(`{"argument": "x", "matches": "*", "concepts": ["c%d", "d%d"]}`, i, i)
	}
	m, err := Parse([]byte(`{"tools": [{"match": "s/t", "kind": "k", "risk": "low", "reversible": true, "concepts": [` + strings.Join(derivs, ",") + `],
	  "propositions": ["p:{a}{b}{c}"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Describe("s/t", mustJSON(t, map[string]any{"x": "y"}))
	wantErr(t, err, CodeLimitExceeded, "/concepts", fmt.Sprint(MaxConcepts))
	_, err = m.Describe("s/t", mustJSON(t, map[string]any{
		"a": []any{"1", "2", "3", "4", "5"}, "b": []any{"1", "2", "3", "4"}, "c": []any{"1", "2", "3", "4"},
	}))
	wantErr(t, err, CodeLimitExceeded, "/arguments/c", fmt.Sprint(MaxPropositions))

	m, err = Parse([]byte(`{"tools": [{"match": "s/t", "kind": "k", "risk": "low", "reversible": true, "propositions": ["{a}{a}{a}"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Describe("s/t", mustJSON(t, map[string]any{"a": strings.Repeat("x", MaxPropositionLen/3+1)}))
	wantErr(t, err, CodeLimitExceeded, "/tools/0/propositions/0", fmt.Sprint(MaxPropositionLen))
}

// A chain of MaxSymlinks links resolves; one more is refused (ELOOP).
func TestSymlinkChainBound(t *testing.T) {
	f := &fakeFS{links: map[string]string{}}
	for i := range MaxSymlinks + 1 {
		f.links[fmt.Sprintf("/l%d", i)] = fmt.Sprintf("/l%d", i+1)
	}
	r := resolver{fs: f}
	if got, err := r.resolve("/l1"); err != nil || got != fmt.Sprintf("/l%d", MaxSymlinks+1) {
		t.Errorf("%d links: %q, %v", MaxSymlinks, got, err)
	}
	if _, err := r.resolve("/l0"); err != ErrSymlinkLoop {
		t.Errorf("%d links: %v, want ErrSymlinkLoop", MaxSymlinks+1, err)
	}
}

// allDirs is a filesystem where every path is a directory.
type allDirs struct{}

func (allDirs) Lstat(name string) (fs.FileInfo, error) { return fakeInfo{name, fs.ModeDir}, nil }
func (allDirs) Readlink(string) (string, error)        { return "", fs.ErrInvalid }

// A call whose paths need more lookups than MaxLookupsPerCall is refused
// (each path here is within MaxPathBytes, and the paths within
// MaxPathsPerCall: only the total is too much).
func TestLookupBudget(t *testing.T) {
	raw := `{"roots": {"s": "/r"}, "tools": [{"match": "s/t", "kind": "k", "risk": "low", "reversible": true,
	  "concepts": [{"argument": "paths", "under": "/r/p", "concepts": ["c"]}]}]}`
	m, err := ParseWith([]byte(raw), Options{FS: allDirs{}})
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("/a", MaxPathBytes/2-2) // 2046 lookups
	paths := make([]string, MaxLookupsPerCall/(MaxPathBytes/2-2)+1)
	for i := range paths {
		paths[i] = deep
	}
	_, err = m.Describe("s/t", mustJSON(t, map[string]any{"paths": paths}))
	wantErr(t, err, CodeLimitExceeded, fmt.Sprintf("/arguments/paths/%d", len(paths)-1), "65536 lookups")
	if _, err := m.Describe("s/t", mustJSON(t, map[string]any{"paths": paths[:len(paths)-2]})); err != nil {
		t.Errorf("%d paths of %d lookups: %v", len(paths)-2, MaxPathBytes/2-2, err)
	}
}
