package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/npmclients"
)

// The proof's programs, built once per test binary.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// bins builds ewp-gateway, ewp-ingest, ewp-audit and mcpecho.
func bins(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "ewp-gateway-bins-")
		if buildErr != nil {
			return
		}
		root, _ := filepath.Abs("../..")
		cmd := exec.Command("go", "build", "-o", binDir+string(filepath.Separator),
			"./cmd/ewp-gateway", "./cmd/ewp-ingest", "./cmd/ewp-audit", "./scripts/mcpecho")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// clients is the gateway's npm set (scripts/clients/gateway/install.sh).
func clients(t *testing.T) npmclients.Set {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the proof runs POSIX programs")
	}
	return npmclients.Require(t, "gateway", "drive.mjs",
		"node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
}

// run runs a program to its end and returns its stdout; it fails the
// test on a non-zero exit unless allowFail.
func runProg(t *testing.T, name string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// agent is the TS SDK client (drive.mjs) as a test drives it.
type agent struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan map[string]any
	mu     sync.Mutex
	elicit []map[string]any
	stderr *bytes.Buffer
}

// newAgent starts drive.mjs with args (stdio COMMAND… or http URL…).
func newAgent(t *testing.T, cs npmclients.Set, args ...string) *agent {
	t.Helper()
	a := &agent{t: t, lines: make(chan map[string]any, 16), stderr: &bytes.Buffer{}}
	a.cmd = exec.Command(cs.Node(), append([]string{cs.Path("drive.mjs")}, args...)...)
	a.cmd.Dir = cs.Dir
	a.cmd.Stderr = &lockedWriter{w: a.stderr}
	var err error
	if a.in, err = a.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go a.read(out)
	t.Cleanup(a.close)
	return a
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (a *agent) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			m = map[string]any{"ok": false, "error": "not JSON: " + sc.Text()}
		}
		if e, ok := m["elicitation"].(map[string]any); ok {
			a.mu.Lock()
			a.elicit = append(a.elicit, e)
			a.mu.Unlock()
			continue
		}
		a.lines <- m
	}
	close(a.lines)
}

func (a *agent) close() {
	start := time.Now()
	defer func() { a.t.Logf("agent closed in %v", time.Since(start)) }()
	_ = a.in.Close()
	done := make(chan struct{})
	go func() { _ = a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = a.cmd.Process.Kill()
		<-done
	}
}

// ask sends one command and waits for its answer.
func (a *agent) ask(cmd map[string]any) map[string]any {
	a.t.Helper()
	b, _ := json.Marshal(cmd)
	if _, err := a.in.Write(append(b, '\n')); err != nil {
		a.t.Fatalf("drive.mjs: %v\n%s", err, a.stderr)
	}
	select {
	case m, ok := <-a.lines:
		if !ok {
			a.t.Fatalf("drive.mjs exited:\n%s", a.stderr)
		}
		return m
	case <-time.After(90 * time.Second):
		a.t.Fatalf("drive.mjs: no answer to %s in 90 s\n%s", b, a.stderr)
	}
	return nil
}

// toolNames lists the tools.
func (a *agent) toolNames() []string {
	a.t.Helper()
	m := a.ask(map[string]any{"op": "list"})
	if m["ok"] != true {
		a.t.Fatalf("tools/list: %v", m["error"])
	}
	var names []string
	for _, x := range m["tools"].([]any) {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	return names
}

// result is one tools/call's answer as the SDK gave it.
type result struct {
	Err      string // the SDK threw: a JSON-RPC error or a timeout
	IsError  bool
	Text     string
	Decision string // _meta ewp/decision_id
}

func (a *agent) call(name string, args map[string]any) result {
	a.t.Helper()
	m := a.ask(map[string]any{"op": "call", "name": name, "arguments": args})
	if m["ok"] != true {
		return result{Err: fmt.Sprint(m["error"])}
	}
	r := m["result"].(map[string]any)
	var out result
	out.IsError, _ = r["isError"].(bool)
	for _, c := range asList(r["content"]) {
		if c, ok := c.(map[string]any); ok && c["type"] == "text" {
			out.Text += fmt.Sprint(c["text"])
		}
	}
	if meta, ok := r["_meta"].(map[string]any); ok {
		out.Decision, _ = meta["ewp/decision_id"].(string)
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

func (a *agent) elicitations() []map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]map[string]any(nil), a.elicit...)
}

// httpGateway starts ewp-gateway --http on a free loopback port and
// returns its MCP URL.
func httpGateway(t *testing.T, bin, config string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "ewp-gateway"), append([]string{"--config", config, "--http", "127.0.0.1:0"}, extra...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	logs := &lockedWriter{w: &bytes.Buffer{}}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(logs, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		_ = pw.Close()
		if t.Failed() {
			t.Logf("ewp-gateway's log:\n%s", logs.w.(*bytes.Buffer))
		}
	})
	re := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/mcp)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(60 * time.Second):
		t.Fatalf("ewp-gateway did not serve within 60 s")
	}
	return ""
}

// postCall sends one tools/call of echo__echo with the bearer token (none
// for ""), returning the status, the body and the challenge.
func postCall(t *testing.T, u, token string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo__echo","arguments":{"text":"hi"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("WWW-Authenticate")
}
