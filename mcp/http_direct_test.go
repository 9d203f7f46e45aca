package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

// panickyStore panics when asked for P-panic, to show how a crashing
// tool is answered.
type panickyStore struct{ *fakeStore }

func (p panickyStore) Latest(ctx context.Context, pid string) (*warrant.View, error) {
	if pid == "P-panic" {
		panic("the store crashed")
	}
	return p.fakeStore.Latest(ctx, pid)
}

// httpFront.direct serves tools/call without mcp-go's Streamable HTTP
// transport, and plain calls of registered tools without mcp-go at all.
// Every answer must be the one the transport gives: the same status,
// content type and bytes, for successes, refusals, crashes and protocol
// errors alike, with and without the ingest token.
func TestDirectToolCallsAnswerAsTheTransport(t *testing.T) {
	const addr = "127.0.0.1:8765"
	handler := func(direct bool) http.Handler {
		srv := New(panickyStore{seeded(t)}, WithClock(func() time.Time { return testNow }), WithLogger(quietLogger()))
		h, err := srv.HTTPHandler(HTTPConfig{Addr: addr, IngestToken: testToken})
		if err != nil {
			t.Fatal(err)
		}
		h.(*httpFront).noDirect = !direct
		return h
	}
	call := func(id, tool, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	}
	record := `{"proposition_id":"P-verified","evidence_id":"e-new","polarity":"supports","content":"seen",` +
		`"source":{"content_hash":"sha256:1","observed_at":"2026-09-21T20:00:00Z"}}`
	inline := `{"evaluated_at":"` + testT + `","view":{"proposition_id":"P-i","checks":[{"check_id":"k","method":"tool_observation",` +
		`"scope":"s","result":"supports","observed_at":"2026-09-21T20:00:00Z","source":{"source_id":"s","lineage_id":"L",` +
		`"origin_type":"tool","origin_locator":"l","snapshot_id":"s1","content_hash":"sha256:2","observed_at":"2026-09-21T20:00:00Z"}}]}}`
	wn := `{"proposition_id":"P-verified","evaluated_at":"` + testT + `"}`
	cases := []struct {
		name, body string
		header     map[string]string
		direct     bool // whether the direct path may hand it to mcp-go's dispatch
		plain      bool // whether it serves the call without mcp-go (plainCall)
	}{
		{"warrant_now", call("1", "warrant_now", wn), nil, true, true},
		{"warrant_now inline", call("2", "warrant_now", inline), nil, true, true},
		{"refusal", call("3", "warrant_now", `{"proposition_id":"P-verified"}`), nil, true, true},
		{"memory_context", call(`"s"`, "memory_context", `{"proposition_id":"P-conflict"}`), nil, true, true},
		{"may_act", call("4", "may_act", `{"proposition_id":"P-verified","action":{"action_id":"a","kind":"k","risk":"high","reversible":false}}`), nil, true, true},
		{"list", call("5", "list_propositions", `{"query":"windows"}`), nil, true, true},
		{"write without the role", call("6", "evidence_record", record), nil, true, true},
		{"write with the role", call("7", "evidence_record", record), map[string]string{"Authorization": "Bearer " + testToken}, true, true},
		{"unknown tool", call("8", "no_such_tool", `{}`), nil, true, false},
		{"arguments not an object", call("9", "warrant_now", `[1]`), nil, true, true},
		{"no arguments", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"list_propositions"}}`, nil, true, true},
		{"supported header", call("11", "list_propositions", `{}`), map[string]string{"MCP-Protocol-Version": "2025-06-18"}, true, true},
		{"unsupported header", call("12", "list_propositions", `{}`), map[string]string{"MCP-Protocol-Version": "1999-01-01"}, true, true},
		{"modern header", call("13", "list_propositions", `{}`), map[string]string{"MCP-Protocol-Version": "2026-07-28"}, true, true},
		{"progress token", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"list_propositions","_meta":{"progressToken":1}}}`, nil, false, false},
		{"non-ASCII arguments", call("15", "list_propositions", `{"query":"日本"}`), nil, false, true},
		{"tools/list", `{"jsonrpc":"2.0","id":16,"method":"tools/list"}`, nil, false, false},
		{"a crashing tool", call("17", "warrant_now", `{"proposition_id":"P-panic","evaluated_at":"`+testT+`"}`), nil, true, true},
		{"string id mcp-go re-escapes", call(`"a\u0041<&>\u2028é\/"`, "warrant_now", wn), nil, true, true},
		{"large integer id", call("-9007199254740991", "warrant_now", wn), nil, true, true},
		{"escaped tool name", call("18", `warrant\u005fnow`, wn), nil, false, true},
		{"escaped argument name", call("19", "warrant_now", `{"proposition\u005fid":"P-verified","evaluated_at":"`+testT+`"}`), nil, false, true},
		{"results with escapes", call("20", "list_propositions", `{"query":"P:x"}`), nil, true, true},
		{"results that need every escape", call("26", "warrant_now", `{"evaluated_at":"`+testT+
			`","view":{"proposition_id":"P<&>\"\\\u2028\u007f\ud800é","view_id":"v\u0001"}}`), nil, false, true},
		{"a key mcp-go reads case-insensitively", `{"jsonrpc":"2.0","id":21,"method":"tools/call","Params":{"name":"list_propositions"},` +
			`"params":{"name":"warrant_now","arguments":` + wn + `}}`, nil, false, false}, // refused by the filter
		{"an unknown top-level key", `{"jsonrpc":"2.0","id":22,"x":1,"method":"tools/call","params":{"name":"warrant_now","arguments":` + wn + `}}`, nil, true, false},
		{"a task", `{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"warrant_now","task":{},"arguments":` + wn + `}}`, nil, true, false},
		{"arguments spelled otherwise", `{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"warrant_now","Arguments":` + wn + `}}`, nil, false, false}, // refused by the filter
		{"a number beyond float64", call("27", "warrant_now", `{"evaluated_at":"`+testT+
			`","view":{"proposition_id":"P","view_id":"v","freshness_policy_seconds":1e400}}`), nil, true, false},
		{"a long number within float64", call("28", "warrant_now", `{"evaluated_at":"`+testT+
			`","view":{"proposition_id":"P","view_id":"v","freshness_policy_seconds":1`+strings.Repeat("0", 305)+`,"x":"1e999"}}`), nil, true, true},
		{"duplicate keys", `{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"list_propositions","arguments":{"limit":1},` +
			`"name":"warrant_now","arguments":` + wn + `}}`, nil, false, false}, // refused by the filter
	}
	direct, transport := handler(true), handler(false)
	srv, _ := newTestServer(t)
	for _, tc := range cases {
		v := srv.screen(context.Background(), []byte(tc.body))
		if v.direct != tc.direct || (v.call != nil) != tc.plain {
			t.Errorf("%s: direct = %v, plain = %v; want %v, %v", tc.name, v.direct, v.call != nil, tc.direct, tc.plain)
		}
		var recs [2]*httptest.ResponseRecorder
		for i, h := range []http.Handler{direct, transport} {
			req := httptest.NewRequest(http.MethodPost, "http://"+addr+EndpointPath, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			recs[i] = httptest.NewRecorder()
			h.ServeHTTP(recs[i], req)
		}
		d, m := recs[0], recs[1]
		if d.Code != m.Code || d.Header().Get("Content-Type") != m.Header().Get("Content-Type") || d.Body.String() != m.Body.String() {
			t.Errorf("%s:\ndirect    %d %s %s\ntransport %d %s %s", tc.name,
				d.Code, d.Header().Get("Content-Type"), d.Body, m.Code, m.Header().Get("Content-Type"), m.Body)
		}
		if (tc.direct || tc.plain) && tc.header == nil && d.Code != http.StatusOK {
			t.Errorf("%s: status %d", tc.name, d.Code)
		}
	}
}
