package mcpwire

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestGuardRefusesForeignHostOriginAndLargeBodies(t *testing.T) {
	hosts, err := NewHosts("127.0.0.1:8080", "gw.example:443")
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	h := Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusTeapot)
	}), hosts, 16, "raise it with --max-request-bytes")
	cases := []struct {
		name, host, origin, body string
		chunked                  bool
		want                     int
	}{
		{"own address", "127.0.0.1:8080", "", "{}", false, http.StatusTeapot},
		{"loopback alias", "localhost:8080", "http://localhost:8080", "{}", false, http.StatusTeapot},
		{"extra name", "gw.example:443", "https://gw.example:443", "{}", false, http.StatusTeapot},
		{"foreign host", "evil.example:8080", "", "{}", false, http.StatusForbidden},
		{"other port", "127.0.0.1:9090", "", "{}", false, http.StatusForbidden},
		{"foreign origin", "127.0.0.1:8080", "http://evil.example", "{}", false, http.StatusForbidden},
		{"at the limit", "127.0.0.1:8080", "", strings.Repeat("x", 16), false, http.StatusTeapot},
		{"over the limit", "127.0.0.1:8080", "", strings.Repeat("x", 17), false, http.StatusRequestEntityTooLarge},
		{"over the limit, chunked", "127.0.0.1:8080", "", strings.Repeat("x", 17), true, http.StatusRequestEntityTooLarge},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodPost, "http://"+c.host+"/mcp", strings.NewReader(c.body))
		r.Host = c.host
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.chunked {
			r.ContentLength = -1
		}
		w := httptest.NewRecorder()
		got = nil
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%s: status %d, want %d (%s)", c.name, w.Code, c.want, w.Body)
		}
		if c.want == http.StatusTeapot && string(got) != c.body {
			t.Errorf("%s: handler read %q, want %q", c.name, got, c.body)
		}
		if c.want == http.StatusRequestEntityTooLarge && !strings.Contains(w.Body.String(), "--max-request-bytes") {
			t.Errorf("%s: 413 without the hint: %s", c.name, w.Body)
		}
	}
}

// An error's message is JSON-quoted whatever it holds (Go's %q would write
// \x escapes, which are not JSON).
func TestWriteErrorIsJSON(t *testing.T) {
	rec := httptest.NewRecorder()
	writeError(rec, http.StatusBadRequest, -32700, "reading failed: \x01\xff \u2028 \"q\"")
	var m struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || m.Error.Code != -32700 || !strings.Contains(m.Error.Message, `"q"`) {
		t.Fatalf("%s: %v %+v", rec.Body.Bytes(), err, m)
	}
}
