package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

// A call past the per-request deadline is answered with the timeout
// refusal at the deadline, for reads (no longer waited for) and writes
// (given up by the store, and not stored).
func TestRequestDeadline(t *testing.T) {
	srv, st := newSlowServer(t, 5*time.Second, WithRequestTimeout(100*time.Millisecond))
	var out bytes.Buffer
	start := time.Now()
	in := strings.NewReader(listRequest + "\n" + recordRequest + "\n")
	if err := srv.ServeStdio(context.Background(), in, &out, true); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("answers took %v with a 100ms deadline", took)
	}
	if n := strings.Count(out.String(), CodeTimeout); n != 2 || !strings.Contains(out.String(), "--request-timeout") {
		t.Fatalf("want two %s answers naming --request-timeout: %s", CodeTimeout, out.String())
	}
	if st.count("P-empty") != 1 {
		t.Fatal("a write that timed out was stored")
	}
}

// A resource read past the deadline is -32603 with the timeout code.
func TestResourceDeadline(t *testing.T) {
	srv, _ := newSlowServer(t, 5*time.Second, WithRequestTimeout(100*time.Millisecond))
	got := srv.handleMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/read",`+
		`"params":{"uri":"ewp://proposition/P-verified"}}`))
	if !bytes.Contains(got, []byte("-32603")) || !bytes.Contains(got, []byte(CodeTimeout)) {
		t.Fatalf("resource read past the deadline: %s", got)
	}
}

// endless is n bytes of spaces, made as they are read.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	if e.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), e.n)
	for i := range p[:k] {
		p[i] = ' '
	}
	e.n -= k
	return k, nil
}

// A stdio line over the limit is answered with an error naming the limit
// and skipped without being held: memory does not grow with its length,
// and the stream goes on.
func TestStdioLineLimit(t *testing.T) {
	srv, _ := newTestServer(t)
	var out bytes.Buffer
	in := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"`), &endless{64 << 20},
		strings.NewReader("}\n"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n"))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := srv.ServeStdio(context.Background(), in, &out, false); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("reading a 64 MiB line allocated %d bytes", grew)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":null`) || !strings.Contains(lines[0], "-32600") ||
		!strings.Contains(lines[0], "1048576 bytes") || !strings.Contains(lines[0], "--max-request-bytes") ||
		!strings.Contains(lines[1], `"id":2`) {
		t.Fatalf("want the limit error, then the next answer: %q", out.String())
	}
	// Exactly at the limit is a message.
	srv, _ = newTestServer(t, WithMaxRequestBytes(100))
	ping := `{"jsonrpc":"2.0","id":3,"method":"ping"}`
	out.Reset()
	_ = srv.ServeStdio(context.Background(), strings.NewReader(ping+strings.Repeat(" ", 100-len(ping))+"\n"), &out, false)
	if !strings.Contains(out.String(), `"id":3,"result"`) {
		t.Fatalf("a line of exactly the limit: %s", out.String())
	}
}

// WithMaxRequestBytes bounds HTTP bodies too, and the 413 names the flag.
func TestHTTPBodyLimitIsConfigurable(t *testing.T) {
	srv, _ := newTestServer(t, WithMaxRequestBytes(100))
	url := httpTestServer(t, srv).URL + EndpointPath
	resp, body := post(t, url, toolsList+strings.Repeat(" ", 100), nil)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(body, []byte("--max-request-bytes")) {
		t.Fatalf("%d: %s", resp.StatusCode, body)
	}
}

// limitStore refuses every stored read as over the limits, as the ledger
// does for a stored view over the server's limits.
type limitStore struct{ *fakeStore }

func (limitStore) Latest(context.Context, string) (*warrant.View, error) {
	return nil, &warrant.Error{Code: warrant.CodeLimitExceeded, Field: "checks", Rule: "more than 10 records"}
}

// A view over the limits is refused with the limit's code, and the
// message says which flags raise the limits.
func TestViewLimits(t *testing.T) {
	srv, _ := newTestServer(t, WithLimits(warrant.Limits{MaxViewBytes: 40}))
	c := dialInProcess(t, srv)
	msg := mustRefuse(t, call(t, c, "warrant_now", obj{"evaluated_at": testT,
		"view": obj{"proposition_id": "P-long-enough", "view_id": "v-long-enough"}}), warrant.CodeLimitExceeded)
	if !strings.Contains(msg, "at most 40 bytes") || !strings.Contains(msg, "--max-view-bytes") {
		t.Errorf("limit refusal: %s", msg)
	}
	mustOK(t, call(t, c, "warrant_now", obj{"evaluated_at": testT, "view": obj{"proposition_id": "P", "view_id": "v"}}))

	srv = New(limitStore{seeded(t)}, WithLogger(quietLogger()))
	msg = mustRefuse(t, call(t, dialInProcess(t, srv), "warrant_now", obj{"proposition_id": "P-verified", "evaluated_at": testT}),
		warrant.CodeLimitExceeded)
	if !strings.Contains(msg, "more than 10 records") || !strings.Contains(msg, "--max-records") {
		t.Errorf("stored view over the limits: %s", msg)
	}
}
