package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// httpFront.direct serves tools/call without mcp-go's Streamable HTTP
// transport. Every answer must be the one the transport gives: the same
// status, content type and bytes, for successes, refusals and protocol
// errors alike, with and without the ingest token.
func TestDirectToolCallsAnswerAsTheTransport(t *testing.T) {
	const addr = "127.0.0.1:8765"
	handler := func(direct bool) http.Handler {
		srv, _ := newTestServer(t)
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
	cases := []struct {
		name, body string
		header     map[string]string
		direct     bool // whether the direct path serves it
	}{
		{"warrant_now", call("1", "warrant_now", `{"proposition_id":"P-verified","evaluated_at":"`+testT+`"}`), nil, true},
		{"warrant_now inline", call("2", "warrant_now", inline), nil, true},
		{"refusal", call("3", "warrant_now", `{"proposition_id":"P-verified"}`), nil, true},
		{"memory_context", call(`"s"`, "memory_context", `{"proposition_id":"P-conflict"}`), nil, true},
		{"may_act", call("4", "may_act", `{"proposition_id":"P-verified","action":{"action_id":"a","kind":"k","risk":"high","reversible":false}}`), nil, true},
		{"list", call("5", "list_propositions", `{"query":"windows"}`), nil, true},
		{"write without the role", call("6", "evidence_record", record), nil, true},
		{"write with the role", call("7", "evidence_record", record), map[string]string{"Authorization": "Bearer " + testToken}, true},
		{"unknown tool", call("8", "no_such_tool", `{}`), nil, true},
		{"arguments not an object", call("9", "warrant_now", `[1]`), nil, true},
		{"no arguments", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"list_propositions"}}`, nil, true},
		{"supported header", call("11", "list_propositions", `{}`), map[string]string{"MCP-Protocol-Version": "2025-06-18"}, true},
		{"unsupported header", call("12", "list_propositions", `{}`), map[string]string{"MCP-Protocol-Version": "1999-01-01"}, true},
		{"modern header", call("13", "list_propositions", `{}`), map[string]string{"MCP-Protocol-Version": "2026-07-28"}, true},
		{"progress token", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"list_propositions","_meta":{"progressToken":1}}}`, nil, false},
		{"non-ASCII arguments", call("15", "list_propositions", `{"query":"日本"}`), nil, false},
		{"tools/list", `{"jsonrpc":"2.0","id":16,"method":"tools/list"}`, nil, false},
	}
	direct, transport := handler(true), handler(false)
	srv, _ := newTestServer(t)
	for _, tc := range cases {
		if got := srv.screen(context.Background(), []byte(tc.body)).direct; got != tc.direct {
			t.Errorf("%s: direct = %v, want %v", tc.name, got, tc.direct)
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
		if tc.direct && tc.header == nil && d.Code != http.StatusOK {
			t.Errorf("%s: status %d", tc.name, d.Code)
		}
	}
}
