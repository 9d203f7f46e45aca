// Package mcpwire is the HTTP plumbing MCP entrances share: how they stop
// (Serve: the requests in flight are answered), and the guard of an
// entrance that serves Streamable HTTP through mcp-go's transport
// (ewp-gateway): the DNS-rebinding defence on Host and Origin (403) and
// the body limit (413), with the same rules and messages as package mcp's
// own front (mcp/http.go), which ewp-mcp serves.
package mcpwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Hosts is the set of host:port values requests may name in Host and
// Origin: the listener's address and, on a loopback bind, the other
// loopback names with the same port, plus the operator's extra names.
type Hosts map[string]bool

// NewHosts is the set for a listener bound to addr (host:port).
func NewHosts(addr string, extra ...string) (Hosts, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("HTTP address %q: %w", addr, err)
	}
	h := Hosts{strings.ToLower(net.JoinHostPort(host, port)): true}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		for _, n := range []string{"localhost", "127.0.0.1", "::1"} {
			h[net.JoinHostPort(n, port)] = true
		}
	}
	for _, e := range extra {
		h[strings.ToLower(e)] = true
	}
	return h, nil
}

// Check is the DNS-rebinding defence: a browser tricked into talking to
// this server sends the attacker's name in Host or Origin. It says why
// it refuses.
func (h Hosts) Check(r *http.Request) (string, bool) {
	if !h[strings.ToLower(r.Host)] {
		return fmt.Sprintf("forbidden: Host %q is not this server's address", r.Host), false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return "", true // not a browser request
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !h[strings.ToLower(u.Host)] {
		return fmt.Sprintf("forbidden: Origin %q is not this server", origin), false
	}
	return "", true
}

// Guard serves next behind the Host/Origin check and, for a POST, a body
// of at most limit bytes (Content-Length or chunked: a longer body is 413
// whichever way it is sent, and only the limit plus one byte is read).
// hint says how the operator raises the limit.
func Guard(next http.Handler, hosts Hosts, limit int, hint string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg, ok := hosts.Check(r); !ok {
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		if r.Method == http.MethodPost {
			body, ok := readBody(w, r, limit, hint)
			if !ok {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		next.ServeHTTP(w, r)
	})
}

func readBody(w http.ResponseWriter, r *http.Request, limit int, hint string) ([]byte, bool) {
	if r.ContentLength > int64(limit) {
		tooLarge(w, limit, hint)
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, -32700, "reading the request body failed: "+err.Error())
		return nil, false
	}
	if len(body) > limit {
		tooLarge(w, limit, hint)
		return nil, false
	}
	return body, true
}

func tooLarge(w http.ResponseWriter, limit int, hint string) {
	w.Header().Set("Connection", "close") // the rest of the body is not read
	writeError(w, http.StatusRequestEntityTooLarge, -32600, fmt.Sprintf("request body exceeds %d bytes; %s", limit, hint))
}

func writeError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// JSON's quoting, not Go's: %q writes \x escapes JSON has not.
	m, _ := json.Marshal(msg)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":%s}}`+"\n", code, m)
}
