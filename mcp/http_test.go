package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

const toolsList = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

// A plain JSON-RPC POST, as curl sends it, gets a JSON reply without any
// session or handshake.
func TestHTTPPlainJSONPost(t *testing.T) {
	srv, _ := newTestServer(t)
	url := httpTestServer(t, srv).URL + EndpointPath
	resp, body := post(t, url, toolsList, nil)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var r struct {
		Result struct {
			Tools []map[string]any `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &r); err != nil || len(r.Result.Tools) != 8 {
		t.Fatalf("%s", body)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"warrant_now","arguments":{"proposition_id":"P-verified","evaluated_at":"2026-09-21T21:00:00Z"}}}`
	_, body = post(t, url, call, nil)
	if !bytes.Contains(body, []byte(`"acceptance":"ACCEPTED"`)) || !bytes.Contains(body, []byte(`"structuredContent"`)) {
		t.Fatalf("%s", body)
	}
}

func TestHTTPBodyLimit(t *testing.T) {
	srv, _ := newTestServer(t)
	url := httpTestServer(t, srv).URL + EndpointPath
	pad := strings.Repeat(" ", MaxBodyBytes)
	resp, body := post(t, url, toolsList+pad, nil)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(body, []byte("exceeds")) {
		t.Fatalf("%d: %s", resp.StatusCode, body)
	}
	// Exactly at the limit is fine.
	resp, _ = post(t, url, toolsList+pad[:MaxBodyBytes-len(toolsList)], nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a body of exactly %d bytes: %d", MaxBodyBytes, resp.StatusCode)
	}
}

func TestHTTPBodyLimitWithoutContentLength(t *testing.T) {
	srv, _ := newTestServer(t)
	url := httpTestServer(t, srv).URL + EndpointPath
	big := io.MultiReader(strings.NewReader(toolsList), strings.NewReader(strings.Repeat(" ", MaxBodyBytes)))
	req, _ := http.NewRequest(http.MethodPost, url, io.NopCloser(big)) // chunked: no length up front
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked oversize body: %d", resp.StatusCode)
	}
}

func TestHTTPDNSRebindingRefused(t *testing.T) {
	srv, _ := newTestServer(t)
	ts := httpTestServer(t, srv)
	url := ts.URL + EndpointPath
	port := ts.Listener.Addr().String()[strings.LastIndex(ts.Listener.Addr().String(), ":"):]
	refused := []map[string]string{
		{"Host": "evil.example" + port},
		{"Host": "evil.example"},
		{"Host": "127.0.0.1:1"},
		{"Origin": "http://evil.example" + port},
		{"Origin": "null"},
		{"Origin": "file://localhost" + port},
	}
	for _, h := range refused {
		if resp, body := post(t, url, toolsList, h); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%v: %d %s", h, resp.StatusCode, body)
		}
	}
	allowed := []map[string]string{
		{"Host": "localhost" + port},
		{"Host": "LOCALHOST" + port},
		{"Host": "[::1]" + port},
		{"Origin": "http://127.0.0.1" + port},
		{"Origin": "http://localhost" + port},
	}
	for _, h := range allowed {
		if resp, body := post(t, url, toolsList, h); resp.StatusCode != http.StatusOK {
			t.Errorf("%v: %d %s", h, resp.StatusCode, body)
		}
	}
}

// A name the operator allows is accepted even on a loopback bind, as
// behind a local reverse proxy that keeps the Host header.
func TestHTTPAllowedHostOnLoopback(t *testing.T) {
	srv, _ := newTestServer(t)
	ts := httptest.NewUnstartedServer(nil)
	h, err := srv.HTTPHandler(HTTPConfig{Addr: ts.Listener.Addr().String(), AllowedHosts: []string{"ewp.proxy.example:443"}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = h
	ts.Start()
	defer ts.Close()
	if resp, body := post(t, ts.URL+EndpointPath, toolsList, map[string]string{"Host": "ewp.proxy.example:443"}); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

func TestHTTPOnlyServesTheEndpoint(t *testing.T) {
	srv, _ := newTestServer(t)
	ts := httpTestServer(t, srv)
	if resp, _ := post(t, ts.URL+"/other", toolsList, nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("other path: %d", resp.StatusCode)
	}
	resp, err := http.Get(ts.URL + EndpointPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET stream: %d", resp.StatusCode)
	}
}

func TestHTTPConfig(t *testing.T) {
	srv, _ := newTestServer(t)
	if _, err := srv.HTTPHandler(HTTPConfig{Addr: "no-port"}); err == nil {
		t.Fatal("an address without a port must be refused")
	}
	h, err := srv.HTTPHandler(HTTPConfig{Addr: "0.0.0.0:8765", AllowedHosts: []string{"ewp.internal:8765"}})
	if err != nil {
		t.Fatal(err)
	}
	hosts := h.(*httpFront).hosts
	if !hosts["ewp.internal:8765"] || !hosts["0.0.0.0:8765"] || hosts["localhost:8765"] {
		t.Fatalf("hosts %v", hosts)
	}
	s := NewHTTPServer("127.0.0.1:8765", h)
	if s.ReadHeaderTimeout == 0 || s.ReadTimeout == 0 || s.WriteTimeout == 0 || s.IdleTimeout == 0 {
		t.Fatalf("timeouts must all be set: %+v", s)
	}
}
