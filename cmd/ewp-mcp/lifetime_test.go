package main

import (
	"context"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/syncbuf"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/warrant"
)

// seededLedger is a real ledger file holding one proposition, P.
func seededLedger(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "ewp.sqlite")
	l, err := sqlite.Create(db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	v, err := warrant.DecodeView([]byte(`{"proposition_id":"P","view_id":"v1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Put(context.Background(), []*warrant.View{v}); err != nil {
		t.Fatal(err)
	}
	return db
}

// evidenceIDs are the evidence ids of P's latest snapshot in db.
func evidenceIDs(t *testing.T, db string) []string {
	t.Helper()
	l, err := sqlite.Open(db, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	v, err := l.Latest(context.Background(), "P")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range v.Evidence {
		ids = append(ids, e.EvidenceID)
	}
	return ids
}

const recordE1 = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"evidence_record","arguments":` +
	`{"proposition_id":"P","evidence_id":"e1","polarity":"supports","content":"seen",` +
	`"source":{"source_id":"s1","origin_type":"turn","content_hash":"sha256:1","observed_at":"2026-09-01T00:00:00Z"}}}}`

// A write request followed at once by end of input is answered, and the
// write is in the ledger: end of input does not cancel work in flight.
func TestStdioEndOfInputAnswersAndCommits(t *testing.T) {
	db := seededLedger(t)
	var out, errb syncbuf.Buffer
	code := run(context.Background(), []string{"--db", db, "--allow-ingest"}, env(),
		strings.NewReader(recordE1+"\n"), &out, &errb, openStore)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `\"stored\":true`) || !strings.Contains(out.String(), `"id":7`) {
		t.Fatalf("answer: %q (stderr %s)", out.String(), errb.String())
	}
	if ids := evidenceIDs(t, db); len(ids) != 1 || ids[0] != "e1" {
		t.Fatalf("evidence in the ledger: %v", ids)
	}
}

// Over HTTP, a client that half-closes its socket after a complete
// request still gets the answer, and a write is committed.
func TestHTTPHalfCloseAnswersAndCommits(t *testing.T) {
	db := seededLedger(t)
	var out, errb syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"--db", db, "--http", "127.0.0.1:0"}, env("EWP_INGEST_TOKEN", "tok-0123456789abcdef"),
			strings.NewReader(""), &out, &errb, openStore)
	}()
	defer func() { cancel(); <-done }()
	u, err := url.Parse(waitForURL(t, &errb))
	if err != nil {
		t.Fatal(err)
	}
	list := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"list_propositions","arguments":{}}}`
	for _, tc := range []struct{ body, want string }{
		{list, `\"proposition_id\":\"P\"`},
		{recordE1, `\"stored\":true`},
	} {
		resp := halfClosedPost(t, u.Host, tc.body)
		if !strings.Contains(resp, " 200 ") || !strings.Contains(resp, tc.want) {
			t.Fatalf("answer to a half-closed request: %q", resp)
		}
	}
	if ids := evidenceIDs(t, db); len(ids) != 1 || ids[0] != "e1" {
		t.Fatalf("evidence in the ledger: %v", ids)
	}
}

// halfClosedPost sends one POST, closes the sending half of the socket
// and reads the whole answer.
func halfClosedPost(t *testing.T, host, body string) string {
	t.Helper()
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n" +
		"Authorization: Bearer tok-0123456789abcdef\r\nConnection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(resp)
}
