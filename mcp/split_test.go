package mcp

import (
	"encoding/json"
	"maps"
	"testing"
)

// splitObject must give what encoding/json gives for every valid JSON
// text: the same members, or not an object.
func FuzzSplitObject(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":1,"a":2}`, `{"a" : [1, {"b": "}"}] , "c":"\"]"}`,
		`{"\u0041":true,"A":false}`, `{"\ud800x":null}`, "{\"\xff\":1}", `{"a":"x\\"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"warrant_now","arguments":{"proposition_id":"P","evaluated_at":"T"}}}`,
		`[1]`, `"s"`, `12`, `null`, `{"a":{"b":{"c":[[],{}]}},"d":-1.5e3}`, "{\"a\":\t\n\r1 }",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // callers validate first
		}
		var want map[string]json.RawMessage
		werr := json.Unmarshal(raw, &want)
		got, ok := splitObject(raw)
		if ok != (werr == nil && want != nil) {
			t.Fatalf("splitObject(%q): ok %v; json.Unmarshal: %v %v", raw, ok, want, werr)
		}
		if ok && !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
			t.Fatalf("splitObject(%q) = %q, want %q", raw, got, want)
		}
		for _, v := range got {
			if cap(v) != len(v) {
				t.Fatalf("member %q can be appended into the message", v)
			}
		}
	})
}
