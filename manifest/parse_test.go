package manifest

import (
	"fmt"
	"strings"
	"testing"
)

// Every manifest error names the field as a JSON pointer and the rule by
// its match pattern.
func TestParseErrorsNameFieldAndRule(t *testing.T) {
	ok := `{"match": "fs/read", "kind": "read", "risk": "low", "reversible": true}`
	rules := func(items ...string) string { return `{"tools": [` + strings.Join(items, ",") + `]}` }
	cases := []struct {
		name, raw, code, field, rule, says string
	}{
		{"bad risk", rules(ok, ok, ok, `{"match": "fs/w", "kind": "write", "risk": "hi", "reversible": false}`),
			CodeInvalidManifest, "/tools/3/risk", "fs/w", "low, medium, high"},
		{"no kind", rules(`{"match": "fs/w", "risk": "low", "reversible": false}`),
			CodeInvalidManifest, "/tools/0/kind", "fs/w", "required"},
		{"no reversible", rules(`{"match": "fs/w", "kind": "k", "risk": "low"}`),
			CodeInvalidManifest, "/tools/0/reversible", "fs/w", "required"},
		{"reversible not a boolean", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": "no"}`),
			CodeInvalidManifest, "/tools/0/reversible", "fs/w", "boolean"},
		{"no match", rules(`{"kind": "k", "risk": "low", "reversible": true}`),
			CodeInvalidManifest, "/tools/0/match", "", "required"},
		{"match without a server", rules(`{"match": "read_file", "kind": "k", "risk": "low", "reversible": true}`),
			CodeInvalidManifest, "/tools/0/match", "read_file", ""},
		{"match with an empty server", rules(`{"match": "/read", "kind": "k", "risk": "low", "reversible": true}`),
			CodeInvalidManifest, "/tools/0/match", "/read", ""},
		{"unknown key", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "riks": "low"}`),
			CodeInvalidManifest, "/tools/0/riks", "fs/w", "not allowed"},
		{"unknown top-level key", `{"tools": [], "tool": []}`, CodeInvalidManifest, "/tool", "", "not allowed"},
		{"no tools", `{"default": "deny"}`, CodeInvalidManifest, "/tools", "", "required"},
		{"bad default", `{"tools": [], "default": "allow"}`, CodeInvalidManifest, "/default", "", "deny, confirm"},
		{"bad cardinality", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "cardinality": "many"}`),
			CodeInvalidManifest, "/tools/0/cardinality", "fs/w", "single, multiple"},
		{"min_depth too deep", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "min_depth": 5}`),
			CodeInvalidManifest, "/tools/0/min_depth", "fs/w", "at most 4"},
		{"min_depth not an integer", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "min_depth": 1.5}`),
			CodeInvalidManifest, "/tools/0/min_depth", "fs/w", "integer"},
		{"bad confirm", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "confirm": "agent"}`),
			CodeInvalidManifest, "/tools/0/confirm", "fs/w", "operator, user"},
		{"empty concept", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "concepts": [""]}`),
			CodeInvalidManifest, "/tools/0/concepts/0", "fs/w", "non-empty"},
		{"derivation without concepts", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "concepts": [{"argument": "path", "under": "/srv"}]}`),
			CodeInvalidManifest, "/tools/0/concepts/0/concepts", "fs/w", "required"},
		{"derivation with both", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "concepts": [{"argument": "path", "under": "/srv", "matches": "*", "concepts": ["c"]}]}`),
			CodeInvalidManifest, "/tools/0/concepts/0", "fs/w", ""},
		{"relative under", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "concepts": [{"argument": "path", "under": "srv", "concepts": ["c"]}]}`),
			CodeInvalidManifest, "/tools/0/concepts/0/under", "fs/w", ""},
		{"unclean under", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "concepts": [{"argument": "path", "under": "/srv/../etc", "concepts": ["c"]}]}`),
			CodeInvalidManifest, "/tools/0/concepts/0/under", "fs/w", "clean"},
		{"look-alike under", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "concepts": [{"argument": "path", "under": "/srv／x", "concepts": ["c"]}]}`),
			CodeInvalidManifest, "/tools/0/concepts/0/under", "fs/w", "NFKC"},
		{"bad pointer", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "concepts": [{"argument": "/a~2", "under": "/srv", "concepts": ["c"]}]}`),
			CodeInvalidManifest, "/tools/0/concepts/0/argument", "fs/w", "JSON pointer"},
		{"unclosed template", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "propositions": ["file:{path"]}`),
			CodeInvalidManifest, "/tools/0/propositions/0", "fs/w", "no \"}\""},
		{"stray brace", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "propositions": ["file}"]}`),
			CodeInvalidManifest, "/tools/0/propositions/0", "fs/w", "}}"},
		{"empty placeholder", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "propositions": ["file:{}"]}`),
			CodeInvalidManifest, "/tools/0/propositions/0", "fs/w", "placeholder"},
		{"empty proposition", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "propositions": [""]}`),
			CodeInvalidManifest, "/tools/0/propositions/0", "fs/w", "non-empty"},
		{"bad redaction", rules(`{"match": "fs/w", "kind": "k", "risk": "low", "reversible": true, "redact": ["/x~"]}`),
			CodeInvalidManifest, "/tools/0/redact/0", "fs/w", "JSON pointer"},
		{"deny rule with a kind", rules(`{"match": "fs/w", "deny": true, "kind": "k"}`),
			CodeInvalidManifest, "/tools/0/kind", "fs/w", "not allowed"},
		{"repeated match", rules(ok, `{"match": "fs/read", "kind": "k", "risk": "low", "reversible": true}`),
			CodeInvalidManifest, "/tools/1/match", "fs/read", "/tools/0"},
		{"relative root", `{"tools": [], "roots": {"fs": "data"}}`, CodeInvalidManifest, "/roots/fs", "", ""},
		{"root with a glob", `{"tools": [], "roots": {"f*": "/data"}}`, CodeInvalidManifest, "/roots/f*", "", ""},
		{"duplicate key", `{"tools": [], "tools": []}`, CodeInvalidManifest, "/tools", "", "twice"},
		{"not JSON", `{"tools": [`, CodeInvalidManifest, "/tools", "", "JSON"},
		{"not an object", `[]`, CodeInvalidManifest, "", "", "object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.raw))
			e := wantErr(t, err, tc.code, tc.field, tc.says)
			if e.Rule != tc.rule {
				t.Errorf("rule %q, want %q (%v)", e.Rule, tc.rule, e)
			}
			if tc.rule != "" && !strings.Contains(e.Error(), fmt.Sprintf("(rule %q)", tc.rule)) {
				t.Errorf("%v does not name the rule", e)
			}
		})
	}
}

func TestParseCountsFurtherProblems(t *testing.T) {
	_, err := Parse([]byte(`{"tools": [{"match": "a/b", "risk": "x", "reversible": 1}]}`))
	e := wantErr(t, err, CodeInvalidManifest, "/tools/0/kind")
	if e.More != 2 || !strings.Contains(e.Error(), "(and 2 more)") {
		t.Errorf("more = %d: %v", e.More, e)
	}
}

func TestWarrantFormKeepsCodeFieldAndRule(t *testing.T) {
	_, err := Parse([]byte(`{"tools": [{"match": "fs/w", "kind": "k", "risk": "hi", "reversible": true}]}`))
	e := wantErr(t, err, CodeInvalidManifest, "/tools/0/risk")
	w := e.Warrant()
	if w.Code != CodeInvalidManifest || w.Field != "/tools/0/risk" || !strings.Contains(w.Rule, `manifest rule "fs/w"`) {
		t.Errorf("warrant form %+v", w)
	}
}
