package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// Keys are matched exactly: a key that differs from a protocol key only by
// case, or one given twice, is refused, never read by mcp-go's
// case-insensitive decoding behind the filter's back.
func TestKeysAreMatchedExactly(t *testing.T) {
	cases := []struct {
		name, msg string
		code      int
		id        string
	}{
		{"Method beside method", `{"jsonrpc":"2.0","id":1,"method":"ping","Method":"tools/list"}`, -32600, "null"},
		{"ID beside id", `{"jsonrpc":"2.0","id":2,"ID":{"x":1},"method":"ping"}`, -32600, "null"},
		{"Params beside params", `{"jsonrpc":"2.0","id":3,"method":"tools/call","Params":{"name":"list_propositions"},"params":{"name":"list_propositions"}}`, -32600, "null"},
		{"duplicate id", `{"jsonrpc":"2.0","id":4,"id":5,"method":"ping"}`, -32600, "null"},
		{"duplicate method", `{"jsonrpc":"2.0","id":6,"method":"ping","method":"tools/list"}`, -32600, "null"},
		{"Name beside name", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_propositions","Name":"warrant_now"}}`, -32602, "7"},
		{"Arguments", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"list_propositions","Arguments":{"limit":1}}}`, -32602, "8"},
		{"URI", `{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"URI":"ewp://protocol"}}`, -32602, "9"},
		{"duplicate params key", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"list_propositions","name":"warrant_now"}}`, -32602, "10"},
	}
	for name, conn := range rawConns(t) {
		for _, tc := range cases {
			raw := conn.send(t, tc.msg)
			var r rpcReply
			if err := json.Unmarshal(raw, &r); err != nil || r.Error == nil {
				t.Errorf("%s: %s: want error %d, got %s", name, tc.name, tc.code, raw)
				continue
			}
			if r.Error.Code != tc.code || string(r.ID) != tc.id {
				t.Errorf("%s: %s: got %d id %s (%s), want %d id %s", name, tc.name, r.Error.Code, r.ID, r.Error.Message, tc.code, tc.id)
			}
		}
		// Only "ID": not a request, so never answered.
		if raw := conn.send(t, `{"jsonrpc":"2.0","ID":11,"method":"tools/list"}`); raw != nil {
			t.Errorf("%s: a message with only ID was answered: %s", name, raw)
		}
	}
}

// A lone surrogate escape never selects another proposition: the tool
// call is refused naming the argument, however deep it sits.
func TestLoneSurrogateArgumentsAreRefused(t *testing.T) {
	call := func(id int, tool, args string) string {
		b, _ := json.Marshal(id)
		return `{"jsonrpc":"2.0","id":` + string(b) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	}
	cases := []struct{ msg, field string }{
		{call(1, "warrant_now", `{"proposition_id":"P-\ud800","evaluated_at":"`+testT+`"}`), "proposition_id"},
		{call(2, "evidence_view_get", `{"proposition_id":"P-\udc00x"}`), "proposition_id"},
		{call(3, "warrant_now", `{"evaluated_at":"`+testT+`","view":{"proposition_id":"P-\ud800","view_id":"v"}}`), "view.proposition_id"},
		{call(4, "warrant_now", `{"evaluated_at":"`+testT+`","view":{"proposition_id":"P","view_id":"v","assertions":[{"assertion_id":"a","text":"x\ud83d"}]}}`), "view.assertions[0].text"},
		{call(5, "list_propositions", `{"query":"\ud800\ud800"}`), "query"},
	}
	for name, conn := range rawConns(t) {
		for _, tc := range cases {
			raw := conn.send(t, tc.msg)
			if !strings.Contains(string(raw), warrant.CodeLoneSurrogate) || !strings.Contains(string(raw), tc.field+": ") {
				t.Errorf("%s: %s: want %s naming %s, got %s", name, tc.msg, warrant.CodeLoneSurrogate, tc.field, raw)
			}
		}
		// A valid pair and an escaped backslash are not lone surrogates.
		raw := conn.send(t, call(6, "list_propositions", `{"query":"\ud83d\ude00 \\ud800"}`))
		if strings.Contains(string(raw), "isError") {
			t.Errorf("%s: valid text refused: %s", name, raw)
		}
	}
}

// The stored "P-\ufffd" is not what "P-\ud800" names: before the fix, the
// lookup returned it.
func TestLoneSurrogateNeverSelectsAnotherProposition(t *testing.T) {
	srv, st := newTestServer(t)
	v, err := warrant.DecodeView([]byte(`{"proposition_id":"P-\ufffd","view_id":"v-replacement"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	got := srv.handleMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+
		`{"name":"evidence_view_get","arguments":{"proposition_id":"P-\ud800"}}}`))
	if strings.Contains(string(got), "v-replacement") || !strings.Contains(string(got), warrant.CodeLoneSurrogate) {
		t.Fatalf("P-\\ud800 answered with another proposition: %s", got)
	}
}

// An id or method holding a lone surrogate or invalid UTF-8 is an invalid
// request answered with a null id: the id is never echoed altered.
func TestBadTextInIDOrMethod(t *testing.T) {
	for name, conn := range rawConns(t) {
		for _, msg := range []string{
			`{"jsonrpc":"2.0","id":"a\ud800","method":"ping"}`,
			`{"jsonrpc":"2.0","id":"a\udfff\ud800","method":"ping"}`,
			"{\"jsonrpc\":\"2.0\",\"id\":\"a\xff\",\"method\":\"ping\"}",
			`{"jsonrpc":"2.0","id":1,"method":"ping\udc00"}`,
			"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"pin\xc3g\"}",
		} {
			raw := conn.send(t, msg)
			var r rpcReply
			if err := json.Unmarshal(raw, &r); err != nil || r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "null" {
				t.Errorf("%s: %q: %s", name, msg, raw)
			}
		}
	}
}

// Resource URIs: a percent-encoded lone surrogate or invalid UTF-8, and a
// lone surrogate escape in the URI string, are refused by name.
func TestResourceURIText(t *testing.T) {
	read := func(uri string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + uri + `"}}`
	}
	cases := []struct{ msg, code string }{
		{read(`ewp://proposition/P-%ED%A0%80`), warrant.CodeLoneSurrogate},
		{read(`ewp://proposition/P-%FF`), CodeInvalidArgument},
		{read(`ewp://proposition/P-verified/warrant?evaluated_at=2026%ED%B0%80`), warrant.CodeLoneSurrogate},
		{read(`ewp://proposition/P-\ud800`), warrant.CodeLoneSurrogate},
	}
	for name, conn := range rawConns(t) {
		for _, tc := range cases {
			raw := conn.send(t, tc.msg)
			var r rpcReply
			if err := json.Unmarshal(raw, &r); err != nil || r.Error == nil || r.Error.Code != -32602 ||
				!strings.Contains(r.Error.Message, tc.code) {
				t.Errorf("%s: %s: want -32602 with %s, got %s", name, tc.msg, tc.code, raw)
			}
		}
	}
}
