package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/ewp-go/ewp/internal/npmclients"
)

// target is one path to the echo tool.
type target struct{ name, url, tool string }

// env is the programs a run starts, and their cleanup.
type env struct {
	root, dir, bin string
	set            npmclients.Set
	procs          []*exec.Cmd
}

func newEnv() (*env, error) {
	set, err := npmclients.Find("gateway", "echo-server.mjs", "node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs")
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(".")
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return nil, fmt.Errorf("run it from the repository's root: %w", err)
	}
	dir, err := os.MkdirTemp("", "gatewaybench-")
	if err != nil {
		return nil, err
	}
	e := &env{root: root, dir: dir, bin: filepath.Join(dir, "bin"), set: set}
	build := exec.Command("go", "build", "-o", e.bin+string(filepath.Separator), "./cmd/ewp-gateway", "./cmd/ewp-ingest", "./scripts/mcpecho")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		e.close()
		return nil, fmt.Errorf("go build: %w", err)
	}
	ingest := exec.Command(filepath.Join(e.bin, "ewp-ingest"), "--db", filepath.Join(dir, "ewp.sqlite"), "--quiet",
		"--attest-trusted-origins", filepath.Join(root, "fixtures/examples/quickstart.json"))
	ingest.Stderr = os.Stderr
	if err := ingest.Run(); err != nil {
		e.close()
		return nil, fmt.Errorf("ewp-ingest: %w", err)
	}
	return e, nil
}

func (e *env) close() {
	for _, p := range e.procs {
		_ = p.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = p.Process.Kill()
			<-done
		}
	}
	_ = os.RemoveAll(e.dir)
}

// stdio is the echo downstream's stdio command line.
func (e *env) stdio(echo string) []string {
	if echo == "go" {
		return []string{filepath.Join(e.bin, "mcpecho")}
	}
	return []string{e.set.Node(), e.set.Path("echo-server.mjs"), "stdio"}
}

// targets starts the three paths to the echo kind named.
func (e *env) targets(echo string) ([]target, error) {
	var direct []string
	switch echo {
	case "ts":
		direct = []string{e.set.Node(), e.set.Path("echo-server.mjs"), "http", "0"}
	case "go":
		direct = []string{filepath.Join(e.bin, "mcpecho"), "--http", "127.0.0.1:0"}
	default:
		return nil, fmt.Errorf("--echo %q: ts or go", echo)
	}
	du, err := e.start(direct, `listening (http://\S+)`)
	if err != nil {
		return nil, err
	}
	gu, err := e.gateway(echo)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	proxy := append([]string{e.set.Node(), e.set.Path("node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs"),
		"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--server", "stream", "--no-eventStore", "--"}, e.stdio(echo)...)
	pu := "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
	if _, err := e.start(proxy, ""); err != nil {
		return nil, err
	}
	if err := waitHTTP(pu); err != nil {
		return nil, fmt.Errorf("mcp-proxy: %w", err)
	}
	return []target{{"direct", du, "echo"}, {"ewp-gateway", gu, "echo__echo"}, {"mcp-proxy", pu, "echo"}}, nil
}

// gateway starts ewp-gateway in front of the echo kind, over a ledger
// with a decision log, its one tool pinned on first sight.
func (e *env) gateway(echo string) (string, error) {
	cmd := e.stdio(echo)
	cfg := map[string]any{
		"db":                 filepath.Join(e.dir, "ewp.sqlite"),
		"pins":               filepath.Join(e.dir, echo+".pins.json"),
		"pin_on_first_sight": true,
		"servers":            map[string]any{"echo": map[string]any{"command": cmd[0], "args": cmd[1:]}},
		"tools":              []any{map[string]any{"match": "echo/echo", "kind": "read", "risk": "low", "reversible": true}},
	}
	b, _ := json.Marshal(cfg)
	path := filepath.Join(e.dir, echo+".gateway.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", err
	}
	return e.start([]string{filepath.Join(e.bin, "ewp-gateway"), "--config", path, "--http", "127.0.0.1:0"},
		`url=(http://127\.0\.0\.1:\d+/mcp)`)
}

// start runs argv in the background; with pattern, it waits for a stderr
// line matching it and returns its first group.
func (e *env) start(argv []string, pattern string) (string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = e.dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	e.procs = append(e.procs, cmd)
	found := make(chan string, 1)
	go func() {
		re := (*regexp.Regexp)(nil)
		if pattern != "" {
			re = regexp.MustCompile(pattern)
		}
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if re != nil {
				if m := re.FindStringSubmatch(sc.Text()); m != nil {
					found <- m[1]
					re = nil
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	if pattern == "" {
		return "", nil
	}
	select {
	case u := <-found:
		return u, nil
	case <-time.After(30 * time.Second):
		return "", fmt.Errorf("%s did not say it serves within 30 s", filepath.Base(argv[0]))
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitHTTP waits until url answers an initialize.
func waitHTTP(url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := newClient(http.DefaultClient, url, "echo")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
