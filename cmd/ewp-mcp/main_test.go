package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/syncbuf"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/warrant"
)

// emptyStore is the smallest Store: it holds what is Put, nothing more.
// The server's behaviour is tested in package mcp; here only the wiring.
type emptyStore struct {
	mu  sync.Mutex
	put []*warrant.View
}

func (s *emptyStore) Latest(context.Context, string) (*warrant.View, error) {
	return nil, mcp.ErrNotFound
}
func (s *emptyStore) Get(context.Context, string, string) (*warrant.View, error) {
	return nil, mcp.ErrNotFound
}
func (s *emptyStore) List(context.Context, string, int) ([]mcp.PropositionSummary, error) {
	return nil, nil
}
func (s *emptyStore) Put(_ context.Context, v *warrant.View) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put = append(s.put, v)
	return true, nil
}
func (s *emptyStore) AppendEvidence(context.Context, string, mcp.EvidenceInput) (*warrant.View, error) {
	return nil, mcp.ErrNotFound
}
func (s *emptyStore) AppendCheck(context.Context, string, mcp.CheckInput) (*warrant.View, error) {
	return nil, mcp.ErrNotFound
}

// fakeOpener records how the ledger was opened.
type fakeOpener struct {
	store    *emptyStore
	writable []bool
	closed   bool
}

func (f *fakeOpener) open(_ string, writable bool) (mcp.Store, io.Closer, error) {
	f.writable = append(f.writable, writable)
	return f.store, f, nil
}

func (f *fakeOpener) Close() error { f.closed = true; return nil }

func ledgerFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ewp.sqlite")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func env(kv ...string) func(string) string {
	return func(k string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1]
			}
		}
		return ""
	}
}

type result struct {
	code           int
	stdout, stderr string
	opener         *fakeOpener
}

func runWith(t *testing.T, args []string, getenv func(string) string, stdin string) result {
	t.Helper()
	o := &fakeOpener{store: &emptyStore{}}
	var out, errb syncbuf.Buffer
	code := run(context.Background(), args, getenv, strings.NewReader(stdin), &out, &errb, o.open)
	return result{code, out.String(), errb.String(), o}
}

func TestHelpTeaches(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		r := runWith(t, []string{arg}, env(), "")
		if r.code != 0 || !strings.Contains(r.stdout, "--allow-ingest") || !strings.Contains(r.stdout, "EWP_INGEST_TOKEN") {
			t.Fatalf("%s: %d %q", arg, r.code, r.stdout)
		}
	}
}

func TestRefusedCommandLines(t *testing.T) {
	db := ledgerFile(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	_ = os.WriteFile(tokenFile, []byte("tok\n"), 0o600)
	cases := []struct {
		args []string
		env  func(string) string
		want string
	}{
		{nil, env(), "--db PATH is required"},
		{[]string{"--db", db, "--http", "127.0.0.1:0", "--allow-ingest"}, env(), "--allow-ingest is refused with --http"},
		{[]string{"--db", db, "--ingest-token", "abc"}, env(), "visible to every user"},
		{[]string{"--db", db, "--ingest-token=abc", "--http", ":1"}, env(), "visible to every user"},
		{[]string{"--db", db, "--ingest-token-file", tokenFile}, env(), "is for --http"},
		{[]string{"--db", db, "--allow-host", "x:1"}, env(), "is for --http"},
		{[]string{"--db", db, "--http", "0.0.0.0:8765"}, env(), "--allow-host"},
		{[]string{"--db", db, "--http", ":0", "--ingest-token-file", tokenFile}, env("EWP_INGEST_TOKEN", "x"), "given twice"},
		{[]string{"--db", db, "--http", ":0", "--ingest-token-file", "/nonexistent/token"}, env(), "--ingest-token-file"},
		{[]string{"--db", db, "stray"}, env(), "unexpected argument"},
		// A file the server reads at start is a usage error, as a token file is.
		{[]string{"--db", db, "--policies", "/nonexistent.cedar"}, env(), "--policies /nonexistent.cedar: cannot read it"},
		{[]string{"--db", db, "--operator-keys", "/nonexistent/keys"}, env(), "--operator-keys /nonexistent/keys: cannot read it"},
		{[]string{"--db", db, "--policies", t.TempDir()}, env(), "is a directory"},
		{[]string{"--db", db, "--bogus"}, env(), "--help"},
	}
	for _, tc := range cases {
		r := runWith(t, tc.args, tc.env, "")
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || len(r.opener.writable) != 0 {
			t.Errorf("%v: code %d, stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

func TestMissingLedgerIsAnError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.sqlite")
	r := runWith(t, []string{"--db", missing}, env(), "")
	if r.code != 1 || !strings.Contains(r.stderr, "ledger not found") || len(r.opener.writable) != 0 {
		t.Fatalf("%d %q", r.code, r.stderr)
	}
}

// The ledger is opened writable only when this process may write.
func TestLedgerOpenedReadOnlyUnlessWritable(t *testing.T) {
	db := ledgerFile(t)
	if r := runWith(t, []string{"--db", db}, env("EWP_INGEST_TOKEN", "ignored"), ""); r.code != 0 ||
		r.opener.writable[0] || !r.opener.closed || !strings.Contains(r.stderr, "ignored on stdio") {
		t.Fatalf("stdio: %+v", r)
	}
	if r := runWith(t, []string{"--db", db, "--allow-ingest"}, env(), ""); r.code != 0 || !r.opener.writable[0] {
		t.Fatalf("stdio --allow-ingest: %+v", r)
	}
}

func TestStdioWritesOnlyProtocolToStdout(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`,
	}, "\n") + "\n"
	r := runWith(t, []string{"--db", ledgerFile(t)}, env(), in)
	if r.code != 0 {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 replies, got %q", r.stdout)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not JSON-RPC: %q", l)
		}
	}
	if !strings.Contains(r.stderr, "serving MCP on stdio") {
		t.Fatalf("logs belong on stderr: %q", r.stderr)
	}
}

func TestHTTPServesAndShutsDown(t *testing.T) {
	o := &fakeOpener{store: &emptyStore{}}
	var out, errb syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	args := []string{"--db", ledgerFile(t), "--http", "127.0.0.1:0"}
	go func() {
		done <- run(ctx, args, env("EWP_INGEST_TOKEN", "tok"), strings.NewReader(""), &out, &errb, o.open)
	}()
	url := waitForURL(t, &errb)
	put := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"evidence_view_put","arguments":{"view":{"proposition_id":"P","view_id":"v"}}}}`
	for _, tc := range []struct{ token, want string }{{"", "EWP_REFUSE_INGEST_ROLE"}, {"tok", `\"stored\":true`}} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(put))
		req.Header.Set("Content-Type", "application/json")
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), tc.want) {
			t.Errorf("token %q: %s", tc.token, body)
		}
	}
	if !o.writable[0] {
		t.Error("with a token the ledger must be writable")
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 || !o.closed || out.String() != "" {
			t.Fatalf("shutdown: code %d closed %v stdout %q stderr %s", code, o.closed, out.String(), errb.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no graceful shutdown")
	}
}

var urlRE = regexp.MustCompile(`url=(http://\S+/mcp)`)

func waitForURL(t testing.TB, logs *syncbuf.Buffer) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		for sc.Scan() {
			if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
				return m[1]
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("server did not start: %s", logs.String())
	return ""
}

func TestBindAddr(t *testing.T) {
	cases := map[string]string{"8765": "127.0.0.1:8765", ":8765": "127.0.0.1:8765",
		"localhost:1": "localhost:1", "[::1]:2": "[::1]:2", "10.0.0.5:3": "10.0.0.5:3"}
	for in, want := range cases {
		if got, err := bindAddr(in); err != nil || got != want {
			t.Errorf("bindAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := bindAddr("127.0.0.1:"); err == nil {
		t.Error("an empty port must be refused")
	}
}

func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	_ = os.WriteFile(open, []byte("  tok-0123456789abcdef  \n"), 0o644)
	var notes []string
	tok, err := ingestToken(open, env(), &notes)
	if err != nil || tok != "tok-0123456789abcdef" || len(notes) != 1 || !strings.Contains(notes[0], "chmod 600") {
		t.Fatalf("%q %v %v", tok, err, notes)
	}
	empty := filepath.Join(dir, "empty")
	_ = os.WriteFile(empty, []byte("\n"), 0o600)
	if _, err := ingestToken(empty, env(), &notes); err == nil {
		t.Fatal("an empty token file must be refused")
	}
	// A device or a huge file named by mistake is refused, not read.
	if _, err := ingestToken("/dev/zero", env(), &notes); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("/dev/zero as a token file: %v", err)
	}
	huge := filepath.Join(dir, "huge")
	_ = os.WriteFile(huge, bytes.Repeat([]byte("a"), 1<<20), 0o600)
	if _, err := ingestToken(huge, env(), &notes); err == nil || !strings.Contains(err.Error(), "the limit is") {
		t.Fatalf("a 1 MiB token file: %v", err)
	}
}
