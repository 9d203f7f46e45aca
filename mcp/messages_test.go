package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// The warrant resource without a query, or with an empty one, is a
// missing evaluated_at; a repeated evaluated_at is refused.
func TestWarrantResourceQuery(t *testing.T) {
	read := func(uri string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + uri + `"}}`
	}
	cases := []struct{ uri, code, says string }{
		{"ewp://proposition/P-verified/warrant", warrant.CodeMissingEvaluatedAt, "evaluated_at is required"},
		{"ewp://proposition/P-verified/warrant?", warrant.CodeMissingEvaluatedAt, "evaluated_at is required"},
		{"ewp://proposition/P-verified/warrant?evaluated_at=" + testT + "&evaluated_at=2020-01-01T00:00:00Z",
			CodeInvalidArgument, "more than once"},
	}
	for name, conn := range rawConns(t) {
		for _, tc := range cases {
			raw := conn.send(t, read(tc.uri))
			var r rpcReply
			if err := json.Unmarshal(raw, &r); err != nil || r.Error == nil || r.Error.Code != -32602 ||
				!strings.Contains(r.Error.Message, tc.code) || !strings.Contains(r.Error.Message, tc.says) {
				t.Errorf("%s: %s: %s", name, tc.uri, raw)
			}
		}
		raw := conn.send(t, read("ewp://proposition/P-verified/warrant?evaluated_at="+testT+"&"))
		if !strings.Contains(string(raw), `"result"`) {
			t.Errorf("%s: a trailing & refused: %s", name, raw)
		}
	}
}

// HTTP headers the server cannot honour get a status and message that
// say so: an unknown MCP-Protocol-Version (400, listing the supported
// revisions) and a compressed body (415, naming the encoding).
func TestHTTPHeaderRefusals(t *testing.T) {
	srv, _ := newTestServer(t)
	url := httpTestServer(t, srv).URL + EndpointPath
	for _, pv := range []string{"2099-01-01", "1999-01-01", "latest"} {
		resp, body := post(t, url, toolsList, map[string]string{"MCP-Protocol-Version": pv})
		if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte(pv)) ||
			!bytes.Contains(body, []byte("supported: 2026-07-28, 2025-11-25")) {
			t.Errorf("MCP-Protocol-Version %s: %d %s", pv, resp.StatusCode, body)
		}
	}
	resp, body := post(t, url, "\x1f\x8b\x08\x00", map[string]string{"Content-Encoding": "gzip"})
	if resp.StatusCode != http.StatusUnsupportedMediaType || !bytes.Contains(body, []byte(`\"gzip\"`)) {
		t.Errorf("gzip body: %d %s", resp.StatusCode, body)
	}
	resp, _ = post(t, url, toolsList, map[string]string{"Content-Encoding": "identity", "MCP-Protocol-Version": "2025-06-18"})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("identity encoding and a known revision: %d", resp.StatusCode)
	}
}
