package mcp

import (
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

// slowStore is the seeded store taking delay per call and failing, as the
// ledger does, when the call's context has ended by then.
type slowStore struct {
	*fakeStore
	delay time.Duration
}

func (s slowStore) wait(ctx context.Context) error {
	select {
	case <-time.After(s.delay):
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s slowStore) List(ctx context.Context, q string, n int) ([]PropositionSummary, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.fakeStore.List(ctx, q, n)
}

func (s slowStore) Put(ctx context.Context, v *warrant.View) (bool, error) {
	if err := s.wait(ctx); err != nil {
		return false, err
	}
	return s.fakeStore.Put(ctx, v)
}

func (s slowStore) Latest(ctx context.Context, pid string) (*warrant.View, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.fakeStore.Latest(ctx, pid)
}

func (s slowStore) AppendEvidence(ctx context.Context, pid string, e EvidenceInput) (*warrant.View, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.fakeStore.AppendEvidence(ctx, pid, e)
}

func newSlowServer(t *testing.T, delay time.Duration, opts ...Option) (*Server, *fakeStore) {
	t.Helper()
	st := seeded(t)
	base := []Option{WithClock(func() time.Time { return testNow }), WithLogger(quietLogger())}
	return New(slowStore{st, delay}, append(base, opts...)...), st
}

const recordRequest = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"evidence_record","arguments":` +
	`{"proposition_id":"P-empty","evidence_id":"e-late","polarity":"supports","content":"seen",` +
	`"source":{"source_id":"s1","origin_type":"turn","content_hash":"sha256:1","observed_at":"2026-09-01T00:00:00Z"}}}}`

const listRequest = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"list_propositions","arguments":{}}}`

// End of input right after a write request: the answer is written before
// ServeStdio returns, and the write happened.
func TestStdioEndOfInputWaitsForAnswers(t *testing.T) {
	srv, st := newSlowServer(t, 200*time.Millisecond)
	var out bytes.Buffer
	in := strings.NewReader(recordRequest + "\n" + listRequest + "\n")
	if err := srv.ServeStdio(context.Background(), in, &out, true); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, `\"stored\":true`) || !strings.Contains(got, `\"proposition_id\":\"P-verified\"`) {
		t.Fatalf("answers at end of input: %q", got)
	}
	if st.count("P-empty") != 2 {
		t.Fatal("the write was not stored")
	}
}

// A client that half-closes its socket after a complete request gets the
// answer, and its write is stored.
func TestHTTPHalfCloseIsAnswered(t *testing.T) {
	srv, st := newSlowServer(t, 200*time.Millisecond)
	ts := httpTestServer(t, srv)
	host := strings.TrimPrefix(ts.URL, "http://")
	for _, tc := range []struct{ body, want string }{
		{listRequest, `\"proposition_id\":\"P-verified\"`},
		{recordRequest, `\"stored\":true`},
		{putRequest, `\"stored\":true`},
	} {
		resp := halfClosedPost(t, host, tc.body)
		if !strings.Contains(resp, " 200 ") || !strings.Contains(resp, tc.want) {
			t.Fatalf("answer to a half-closed request: %q", resp)
		}
	}
	if st.count("P-empty") != 2 || st.count("P-put") != 1 {
		t.Fatal("a write was not stored")
	}
}

const putRequest = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"evidence_view_put","arguments":` +
	`{"view":{"proposition_id":"P-put","view_id":"v-put"}}}}`

// halfClosedPost sends one POST with the ingest token, closes the sending
// half of the socket and reads the whole answer.
func halfClosedPost(t *testing.T, host, body string) string {
	t.Helper()
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n" +
		"Authorization: Bearer " + testToken + "\r\nConnection: close\r\n" +
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
