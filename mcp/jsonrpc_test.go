package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawConn sends raw JSON-RPC text and returns the reply, or nil when the
// server sends none.
type rawConn interface {
	send(t *testing.T, msg string) []byte
}

// stdioConn drives ServeStdio over pipes, line by line.
type stdioConn struct {
	in    io.Writer
	lines chan []byte
}

func newStdioConn(t *testing.T, srv *Server) *stdioConn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = srv.ServeStdio(ctx, inR, outW, false)
		_ = outW.Close()
		close(done)
	}()
	c := &stdioConn{in: inW, lines: make(chan []byte, 16)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(c.lines)
	}()
	t.Cleanup(func() { _ = inW.Close(); cancel(); <-done })
	return c
}

// send writes msg and returns the next line. A message without an id is
// followed by a ping: requests are served concurrently, but notifications
// (and the filter's replies) are handled in order on the read loop, so a
// reply to the notification would have to arrive before the ping's.
func (c *stdioConn) send(t *testing.T, msg string) []byte {
	t.Helper()
	note := !strings.Contains(msg, `"id"`)
	if note {
		msg += "\n" + `{"jsonrpc":"2.0","id":"fence","method":"ping"}`
	}
	if _, err := io.WriteString(c.in, msg+"\n"); err != nil {
		t.Fatal(err)
	}
	line := c.next(t)
	if note && strings.Contains(string(line), `"id":"fence"`) {
		return nil
	}
	return line
}

func (c *stdioConn) next(t *testing.T) []byte {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			t.Fatal("server closed stdout")
		}
		return line
	case <-time.After(5 * time.Second):
		t.Fatal("no reply")
	}
	return nil
}

type httpConn struct{ url string }

func (c httpConn) send(t *testing.T, msg string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusAccepted && len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("reply is %s (%d), not JSON: %s", ct, resp.StatusCode, body)
	}
	return body
}

func rawConns(t *testing.T) map[string]rawConn {
	srvA, _ := newTestServer(t)
	srvB, _ := newTestServer(t)
	return map[string]rawConn{
		"stdio": newStdioConn(t, srvA),
		"http":  httpConn{url: httpTestServer(t, srvB).URL + EndpointPath},
	}
}

type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcErrorBody   `json:"error"`
}

func TestJSONRPCErrors(t *testing.T) {
	const readOld = `"_meta": {}`
	cases := []struct {
		name, msg string
		code      int
		id        string // expected id in the reply
	}{
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, -32600, "null"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, "null"},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`, -32600, "null"},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, -32600, "null"},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, -32600, "null"},
		{"huge id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list"}`, -32600, "null"},
		{"id past 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}`, -32600, "null"},
		{"string params", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":"x"}`, -32602, "7"},
		{"array params", `{"jsonrpc":"2.0","id":"s","method":"tools/call","params":[1,2]}`, -32602, `"s"`},
		{"number params", `{"jsonrpc":"2.0","id":8,"method":"resources/read","params":5}`, -32602, "8"},
		{"tool name not a string", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":5}}`, -32602, "9"},
		{"prompt args not strings", `{"jsonrpc":"2.0","id":10,"method":"prompts/get","params":{"name":"packet_rules","arguments":{"proposition_id":5}}}`, -32602, "10"},
		{"uri not a string", `{"jsonrpc":"2.0","id":11,"method":"resources/read","params":{"uri":[]}}`, -32602, "11"},
		{"unknown method", `{"jsonrpc":"2.0","id":12,"method":"tools/explode"}`, -32601, "12"},
		{"unknown resource", `{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{"uri":"file:///etc/passwd",` + readOld + `}}`, -32002, "13"},
		{"unknown proposition", `{"jsonrpc":"2.0","id":14,"method":"resources/read","params":{"uri":"ewp://proposition/P-nope"}}`, -32002, "14"},
		{"malformed ewp uri", `{"jsonrpc":"2.0","id":15,"method":"resources/read","params":{"uri":"ewp://proposition/P-verified/history"}}`, -32002, "15"},
		{"warrant without T", `{"jsonrpc":"2.0","id":16,"method":"resources/read","params":{"uri":"ewp://proposition/P-verified/warrant?evaluated_at="}}`, -32602, "16"},
		{"warrant with bad T", `{"jsonrpc":"2.0","id":17,"method":"resources/read","params":{"uri":"ewp://proposition/P-verified/warrant?evaluated_at=noon"}}`, -32602, "17"},
		{"bad jsonrpc version", `{"jsonrpc":"1.0","id":18,"method":"tools/list"}`, -32600, "18"},
		{"no method", `{"jsonrpc":"2.0","id":19}`, -32600, "19"},
		{"batch", `[{"jsonrpc":"2.0","id":20,"method":"tools/list"}]`, -32600, "null"},
		{"not JSON", `{"jsonrpc":`, -32700, "null"},
	}
	for name, conn := range rawConns(t) {
		t.Run(name, func(t *testing.T) {
			for _, tc := range cases {
				raw := conn.send(t, tc.msg)
				var r rpcReply
				if err := json.Unmarshal(raw, &r); err != nil || r.Error == nil {
					t.Errorf("%s: want error %d, got %s", tc.name, tc.code, raw)
					continue
				}
				if r.Error.Code != tc.code || string(r.ID) != tc.id || r.JSONRPC != "2.0" || r.Error.Message == "" {
					t.Errorf("%s: got code %d id %s (%s), want %d id %s", tc.name, r.Error.Code, r.ID, r.Error.Message, tc.code, tc.id)
				}
			}
		})
	}
}

func TestNotificationsAreNeverAnswered(t *testing.T) {
	notes := []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/unknown","params":{}}`,
		`{"jsonrpc":"1.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}`,
		`{"jsonrpc":"2.0","method":5}`,
		`{"jsonrpc":"2.0"}`,
	}
	for name, conn := range rawConns(t) {
		for _, n := range notes {
			if raw := conn.send(t, n); raw != nil {
				t.Errorf("%s: notification %s was answered: %s", name, n, raw)
			}
		}
	}
}

func TestValidIDsAreEchoed(t *testing.T) {
	for name, conn := range rawConns(t) {
		for _, id := range []string{`0`, `-3`, `"abc"`, `""`, `9007199254740991`} {
			raw := conn.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
			var r rpcReply
			if err := json.Unmarshal(raw, &r); err != nil || r.Error != nil || string(r.ID) != id {
				t.Errorf("%s: id %s: %s", name, id, raw)
			}
		}
	}
}

func TestModernUnknownResourceIsInvalidParams(t *testing.T) {
	// The 2026-07-28 revision moved "resource not found" to -32602, and
	// mcp-go follows the revision each request declares; so does the filter.
	srv, _ := newTestServer(t)
	ctx := context.Background()
	msg := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"ewp://proposition/P-nope",` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	var r rpcReply
	if err := json.Unmarshal(srv.handleMessage(ctx, []byte(msg)), &r); err != nil || r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("%+v", r)
	}
}

func FuzzScreen(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":null}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"ewp://proposition/P%3Ax/warrant?evaluated_at=2026-09-21T21:00:00+02:00"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"warrant_now","arguments":[]}}`,
		`[]`, `"x"`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	srv, _ := newTestServer(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		v := srv.screen(context.Background(), msg)
		if v.reply != nil && !json.Valid(v.reply) {
			t.Fatalf("reply is not JSON: %s", v.reply)
		}
		if v.forward != nil && !json.Valid(v.forward) {
			t.Fatalf("forwarded message is not JSON: %s", v.forward)
		}
	})
}
