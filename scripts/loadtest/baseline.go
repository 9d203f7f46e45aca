package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/mcp"
)

// The baseline (-baseline) is the floor of this harness: a bare net/http
// server, with ewp-mcp's server settings, that answers each call with a
// real warrant_now answer made once at start and re-used with the
// caller's JSON-RPC id and proposition spliced in. It reads and writes
// what ewp-mcp does and does none of its work, so the difference between
// the two runs is the server's own cost, and what the baseline itself
// reaches is what any net/http server can reach on this machine with
// this client beside it.

// samplePropID is the proposition of the answer the baseline re-uses.
const samplePropID = "P-0000000"

// baselineAnswer is one real answer cut where the id and the proposition
// go: parts[0] ends just before the JSON-RPC id, parts[1] runs from after
// it to the first proposition id, and so on.
type baselineAnswer struct{ parts [][]byte }

// newBaselineAnswer asks the real server, in this process, for the
// sample proposition's warrant.
func newBaselineAnswer(db string) (*baselineAnswer, error) {
	l, err := sqlite.Open(db, sqlite.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	h, err := ewpHandler(l, "127.0.0.1:1")
	if err != nil {
		return nil, err
	}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:1"+mcp.EndpointPath, bytes.NewReader(appendCall(nil, 0, 0)))
	for _, kv := range callHeaders {
		req.Header.Set(kv[0], kv[1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body := rec.Body.Bytes()
	if err := checkResponse(rec.Code, body, 0, true); err != nil {
		return nil, fmt.Errorf("the sample answer: %w", err)
	}
	const idKey = `{"jsonrpc":"2.0","id":0,`
	if !bytes.HasPrefix(body, []byte(idKey)) {
		return nil, fmt.Errorf("the sample answer does not start %s: %.100s", idKey, body)
	}
	a := &baselineAnswer{parts: [][]byte{[]byte(idKey[:len(idKey)-2])}}
	a.parts = append(a.parts, bytes.Split(body[len(idKey)-1:], []byte(samplePropID))...)
	return a, nil
}

// append writes the answer to a call with JSON-RPC id id about
// proposition prop.
func (a *baselineAnswer) append(b, id, prop []byte) []byte {
	b = append(append(b, a.parts[0]...), id...)
	for i, p := range a.parts[1:] {
		if i > 0 {
			b = append(b, prop...)
		}
		b = append(b, p...)
	}
	return b
}

// callFields finds the id and proposition of a call appendCall wrote.
func callFields(body []byte) (id, prop []byte, err error) {
	id, err = after(body, `"id":`, func(c byte) bool { return c >= '0' && c <= '9' })
	if err == nil {
		prop, err = after(body, `"proposition_id":"`, func(c byte) bool { return c != '"' })
	}
	return id, prop, err
}

func after(b []byte, key string, in func(byte) bool) ([]byte, error) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return nil, fmt.Errorf("no %s in the call", key)
	}
	v := b[i+len(key):]
	n := 0
	for n < len(v) && in(v[n]) {
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("empty %s in the call", key)
	}
	return v[:n], nil
}

// startBaseline serves the baseline from this process.
func startBaseline(db string) (*server, error) {
	ans, err := newBaselineAnswer(db)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	contentType := []string{"application/json"}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		var id, prop []byte
		if err == nil {
			id, prop, err = callFields(body)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out := ans.append(make([]byte, 0, 4<<10), id, prop)
		w.Header()["Content-Type"] = contentType
		w.Header()["Content-Length"] = []string{strconv.Itoa(len(out))}
		_, _ = w.Write(out)
	})
	stop := serveOn(ln, h, func() {})
	return &server{kind: "baseline (bare net/http) in-process", url: "http://" + ln.Addr().String() + mcp.EndpointPath, inproc: true, stop: stop}, nil
}
