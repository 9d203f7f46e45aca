package downstream

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/gateway/config"
	"github.com/mark3labs/mcp-go/mcp"
)

// stdioServer is the fake server run as a child, with short timings.
func stdioServer(t *testing.T, name string, env map[string]string) config.Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{fakeEnv: "1"}
	for k, v := range env {
		e[k] = v
	}
	return config.Server{Name: name, Command: exe, Args: []string{"-test.run=^$"}, Env: e, Cwd: t.TempDir(),
		Timeout: 3 * time.Second, Restart: config.Backoff{Min: 50 * time.Millisecond, Max: 400 * time.Millisecond}}
}

func httpServer(t *testing.T, name string) config.Server {
	return config.Server{Name: name, URL: fakeHTTP(t).URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret-header"},
		Timeout: 3 * time.Second, Restart: config.Backoff{Min: 50 * time.Millisecond, Max: 400 * time.Millisecond}}
}

// logs collects the registry's log, safe to read while it writes.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func start(t *testing.T, opt Options, servers ...config.Server) (*Registry, *logs) {
	t.Helper()
	lg := &logs{}
	opt.Servers = servers
	if opt.PinsPath == "" {
		opt.PinsPath = filepath.Join(t.TempDir(), "pins.json")
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(lg, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	r, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	return r, lg
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) != 1 {
		t.Fatalf("result = %+v, want one content", res)
	}
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		t.Fatalf("content = %T, want text", res.Content[0])
	}
	return tc.Text
}

func call(t *testing.T, r *Registry, name, args string) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var raw []byte
	if args != "" {
		raw = []byte(args)
	}
	return r.Call(ctx, name, raw, nil)
}

func mustEcho(t *testing.T, r *Registry, name, msg string) {
	t.Helper()
	res, err := call(t, r, name, `{"text":"`+msg+`"}`)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if got := text(t, res); got != msg {
		t.Fatalf("%s = %q, want %q", name, got, msg)
	}
}

func wantCode(t *testing.T, err error, code, server string) *Error {
	t.Helper()
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("err = %v (%T), want %s", err, err, code)
	}
	if e.Code != code || e.Server != server {
		t.Fatalf("err = %v (code %s server %q), want %s from %q", err, e.Code, e.Server, code, server)
	}
	return e
}

// eventuallyEcho waits until name echoes again (after a restart).
func eventuallyEcho(t *testing.T, r *Registry, name string) {
	t.Helper()
	eventually(t, name+" to answer again", func() bool {
		res, err := call(t, r, name, `{"text":"back"}`)
		return err == nil && len(res.Content) == 1
	})
}

type configFor struct {
	srv  config.Server
	pins string
}

func (c configFor) config() config.Config {
	return config.Config{Servers: []config.Server{c.srv}, Pins: c.pins}
}
