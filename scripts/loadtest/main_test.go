package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// appendCall must send exactly the warrant_now call the load test
// describes, for any id and proposition number.
func TestAppendCall(t *testing.T) {
	for _, c := range [][2]int{{0, 0}, {1, 42}, {123456, 99_999}, {7, 1_234_567}} {
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"warrant_now",`+
			`"arguments":{"proposition_id":"P-%07d","evaluated_at":%q}}}`, c[0], c[1], evaluatedAt)
		got := appendCall(nil, c[0], c[1])
		if string(got) != want || !json.Valid(got) {
			t.Errorf("appendCall(%d, %d) = %s, want %s", c[0], c[1], got, want)
		}
	}
}

// readResponse reads what the server sends and refuses what it cannot
// read, rather than mis-reading it.
func TestReadResponse(t *testing.T) {
	cases := []struct {
		in      string
		status  int
		body    string
		closing bool
		fails   bool
	}{
		{"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 7\r\n\r\n{\"a\":1}rest", 200, `{"a":1}`, false, false},
		{"HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", 413, `{}`, true, false},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 200, "", true, true},
		{"HTTP/1.1 200 OK\r\n\r\n{}", 200, "", true, true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}", 200, "", false, true},
		{"SSH-2.0-OpenSSH\r\n", 0, "", true, true},
	}
	for _, c := range cases {
		var resp bytes.Buffer
		status, closing, err := readResponse(bufio.NewReader(strings.NewReader(c.in)), &resp)
		if (err != nil) != c.fails || status != c.status || (!c.fails && (resp.String() != c.body || closing != c.closing)) {
			t.Errorf("%q: status %d closing %v body %q err %v", c.in, status, closing, resp.String(), err)
		}
	}
}
