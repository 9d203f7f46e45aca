package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// The pre-filter skips decoding where the bytes already decide. These
// tests hold the shortcuts to what full decoding answers.

// decodedModern is message.modern without the shortcut.
func decodedModern(m message) bool {
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(m["params"], &p)
	v, _ := p.Meta[mcpgo.MetaKeyProtocolVersion].(string)
	return mcpgo.IsModernProtocol(v)
}

// decodedMethod is message.method without the shortcut.
func decodedMethod(m message) string {
	var s string
	if !isString(m["method"]) || json.Unmarshal(m["method"], &s) != nil {
		return ""
	}
	return s
}

var screenCorpus = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"warrant_now","arguments":{"proposition_id":"P-1"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_META":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_Meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"\u005fmeta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_m\u0065ta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"_meta","_meta":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"日本","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"_meta"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools\/list"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/\u006cist"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tööls"}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"bad \xff utf8\"}",
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1}`,
}

func TestScreenShortcutsMatchDecoding(t *testing.T) {
	for _, msg := range screenCorpus {
		var m message
		if err := json.Unmarshal([]byte(msg), &m); err != nil {
			t.Fatalf("%s: %v", msg, err)
		}
		if got, want := m.modern(), decodedModern(m); got != want {
			t.Errorf("%s: modern %v, decoding says %v", msg, got, want)
		}
		if got, want := m.method(), decodedMethod(m); got != want {
			t.Errorf("%s: method %q, decoding says %q", msg, got, want)
		}
	}
}

func FuzzScreenShortcuts(f *testing.F) {
	for _, msg := range screenCorpus {
		f.Add([]byte(msg))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		var m message
		if json.Unmarshal(msg, &m) != nil {
			return
		}
		if got, want := m.modern(), decodedModern(m); got != want {
			t.Fatalf("%s: modern %v, decoding says %v", msg, got, want)
		}
		if got, want := m.method(), decodedMethod(m); got != want {
			t.Fatalf("%s: method %q, decoding says %q", msg, got, want)
		}
	})
}

// Invalid JSON is -32700 and valid JSON that is not an object is -32600,
// whichever way the filter finds out.
func TestScreenParseErrors(t *testing.T) {
	srv, _ := newTestServer(t)
	for msg, code := range map[string]int{
		`{"jsonrpc":`:         mcpgo.PARSE_ERROR,
		`{"a":1} trailing`:    mcpgo.PARSE_ERROR,
		`{"a":1,}`:            mcpgo.PARSE_ERROR,
		`[1,`:                 mcpgo.PARSE_ERROR,
		`nul`:                 mcpgo.PARSE_ERROR,
		`[]`:                  mcpgo.INVALID_REQUEST,
		`[{"jsonrpc":"2.0"}]`: mcpgo.INVALID_REQUEST,
		`"x"`:                 mcpgo.INVALID_REQUEST,
		`12`:                  mcpgo.INVALID_REQUEST,
		`null`:                mcpgo.INVALID_REQUEST,
	} {
		v := srv.screen(context.Background(), []byte(msg))
		var r rpcReply
		if err := json.Unmarshal(v.reply, &r); err != nil || r.Error == nil || r.Error.Code != code || string(r.ID) != "null" {
			t.Errorf("%s: got %s, want error %d with a null id", msg, v.reply, code)
		}
	}
}

func TestContainsFold(t *testing.T) {
	for _, tc := range []struct {
		b    string
		want bool
	}{
		{`{"_meta":1}`, true}, {`{"_META":1}`, true}, {`{"_MeTa":1}`, true}, {`_meta`, true},
		{`{"meta":1}`, false}, {`{"_met":1}`, false}, {``, false}, {`_mEt`, false}, {`~meta`, false},
	} {
		if got := containsFold([]byte(tc.b), "_meta"); got != tc.want {
			t.Errorf("containsFold(%q) = %v", tc.b, got)
		}
	}
}

// unquote takes a shortcut for plain ASCII strings; it must agree with
// encoding/json on every JSON string, escaped or not.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{"", "plain", `quo"te`, `back\\slash`, "tab\t", "日本", "\xff", "\u2028", "/"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, escapeSlash bool) {
		raw, err := json.Marshal(s)
		if err != nil {
			t.Skip()
		}
		if escapeSlash { // another valid spelling of the same string
			raw = bytes.ReplaceAll(raw, []byte("/"), []byte(`\/`))
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		got, err := unquote(raw)
		if err != nil || got != want {
			t.Fatalf("%s: unquote = %q, %v; encoding/json says %q", raw, got, err, want)
		}
		// The bytes of s quoted as they are, invalid UTF-8 included, when
		// that is valid JSON.
		verbatim := []byte(`"` + s + `"`)
		if json.Unmarshal(verbatim, &want) == nil {
			if got, err := unquote(verbatim); err != nil || got != want {
				t.Fatalf("%q: unquote = %q, %v; encoding/json says %q", verbatim, got, err, want)
			}
		}
	})
}
