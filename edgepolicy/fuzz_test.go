package edgepolicy

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func FuzzLoad(f *testing.F) {
	if demo, err := os.ReadFile(demoPolicies); err == nil {
		f.Add(demo)
	}
	f.Add([]byte(forbidPolicy("p", "a", "b", 1, `@confirm("c") @cardinality("single")`, `context.arguments.x like "y*"`)))
	f.Add([]byte(`@id("p") permit (principal, action, resource);`))
	f.Add([]byte(`@id("p") @source("a") @target("b") @source_depth("9") forbid (principal, action, resource) when { 1 + "x" };`))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Load("fuzz.cedar", src)
		if err != nil {
			if s != nil {
				t.Fatal("Load returned a Set together with an error")
			}
			return
		}
		// A loaded set is fully usable: every policy is a placed forbid
		// with a valid depth, and evaluating it never panics.
		var edges []Edge
		for _, p := range s.policies {
			if p.id == "" || p.source == "" || p.target == "" || p.depth < 0 || p.depth > 4 {
				t.Fatalf("accepted a malformed policy %+v", p)
			}
			edges = append(edges, Edge{Source: p.source, Target: p.target, SourceDepth: p.depth})
		}
		vs := s.Evaluate(edges, Request{ToolName: "t", Arguments: map[string]any{"path": "x"}})
		if len(vs) > s.Len() {
			t.Fatalf("%d violations from %d policies", len(vs), s.Len())
		}
	})
}

// FuzzEvaluate decodes random JSON as tool arguments and checks the demo
// policies on delete->file against an independent statement of their
// meaning: each fires unless path is a string that does not start with its
// prefix (a missing, null or non-string path cannot be evaluated and fires).
func FuzzEvaluate(f *testing.F) {
	for _, seed := range []string{`{"path":"protected.txt"}`, `{"path":"/etc/x"}`, `{"path":"/tmp/y","n":1.5}`,
		`{}`, `{"path":null}`, `{"path":3}`, `{"path":["protected"]}`, `{"path":"a","deep":{"x":[1,null,{"y":1e300}]}}`} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	s := loadDemo(f)
	f.Fuzz(func(t *testing.T, doc []byte, useNumber bool) {
		args, ok := decodeArgs(doc, useNumber)
		if !ok {
			return
		}
		vs := s.Evaluate([]Edge{deleteFileD3}, Request{ToolName: "rm", Cardinality: "single", Arguments: args})
		want := map[string]bool{
			"protected_file":      firesOnPath(args, "protected"),
			"no_delete_under_etc": firesOnPath(args, "/etc/"),
		}
		got := map[string]bool{}
		for _, v := range vs {
			got[v.PolicyID] = true
		}
		for id, w := range want {
			if got[id] != w {
				t.Fatalf("%s fired=%v, want %v for arguments %s (violations %+v)", id, got[id], w, doc, vs)
			}
		}
		if len(vs) != len(got) || len(got) > len(want) {
			t.Fatalf("unexpected violations %+v", vs)
		}
	})
}

func decodeArgs(doc []byte, useNumber bool) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if useNumber {
		dec.UseNumber()
	}
	var args map[string]any
	if dec.Decode(&args) != nil || args == nil {
		return nil, false
	}
	return args, true
}

func firesOnPath(args map[string]any, prefix string) bool {
	path, isString := args["path"].(string)
	return !isString || strings.HasPrefix(path, prefix)
}
