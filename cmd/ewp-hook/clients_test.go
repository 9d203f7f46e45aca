package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/testskip"
)

// The real-client tests drive the pinned npm clients against a real
// ewp-mcp with the hook endpoints, and a scripted model stand-in
// (internal/modeltest) in place of the model: no network is needed.

// clientBin is the path of a pinned client's executable; the test skips
// (fails, with CI set) when it is not installed.
func clientBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("EWP_CLIENTS_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "ewp-clients")
	}
	p := filepath.Join(dir, "claude-openclaw", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		msg := testskip.Message(testskip.Clients, name+" not at "+p)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// binDir holds the commands built once for the tests (TestMain).
var binDir string

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "ewp-hook-bin")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		binDir = dir
		return m.Run()
	}()
	os.Exit(code)
}

// built builds the project's commands once, on first use.
func built(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(binDir, "ewp-hook")); err == nil {
		return binDir
	}
	cmd := exec.Command("go", "build", "-o", binDir+"/", "./cmd/ewp-hook", "./cmd/ewp-mcp", "./cmd/ewp-ingest", "./cmd/ewp-audit")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return binDir
}

// gateServer is an ewp-mcp serving the hook endpoints over a ledger with
// the filesystem demo graph, testdata/tools.json and
// testdata/protected.cedar (writes under a protected/ directory DENY).
type gateServer struct {
	URL, DB string
	bin     string
	// Key is the operator's private key, which the server trusts.
	Key string
}

func startGate(t *testing.T) *gateServer {
	t.Helper()
	bin := built(t)
	dir := t.TempDir()
	g := &gateServer{DB: filepath.Join(dir, "l.db"), bin: bin}
	runCmd(t, bin+"/ewp-ingest", "init", "--db", g.DB)
	runCmd(t, bin+"/ewp-ingest", "--db", g.DB, "../../fixtures/graphs/filesystem-demo.json")
	tools, _ := filepath.Abs("testdata/tools.json")
	policies, _ := filepath.Abs("testdata/protected.cedar")
	g.Key = filepath.Join(dir, "operator.key")
	public := runCmd(t, bin+"/ewp-audit", "keygen", "--out", g.Key, "--name", "alice")
	keys := filepath.Join(dir, "operator-keys")
	var line string
	for _, l := range strings.Split(string(public), "\n") {
		if strings.HasPrefix(l, "ed25519 ") {
			line = l
		}
	}
	if err := os.WriteFile(keys, []byte(line+"\n"), 0o644); err != nil || line == "" {
		t.Fatalf("operator keys: %v\n%s", err, public)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin+"/ewp-mcp", "--db", g.DB, "--http", "127.0.0.1:0", "--tools", tools, "--policies", policies,
		"--operator-keys", keys)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	g.URL = waitFor(t, stderr, `"serving MCP over HTTP"`, "url=http://")
	g.URL = "http://" + strings.TrimSuffix(strings.Fields(g.URL)[0], "/mcp")
	return g
}

// waitFor reads the server's log until a line holds marker, and returns
// what follows key on it.
func waitFor(t *testing.T, r interface{ Read([]byte) (int, error) }, marker, key string) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, strings.Trim(marker, `"`)) {
				if _, after, ok := strings.Cut(line, key); ok {
					found <- after
				}
			}
		}
	}()
	select {
	case s := <-found:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start in 30 s")
	}
	return ""
}

func runCmd(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return out
}

// addAgent creates an agent and returns its credential, printed once.
func (g *gateServer) addAgent(t *testing.T, name string) string {
	t.Helper()
	out := runCmd(t, g.bin+"/ewp-audit", "agents", "add", name, "--db", g.DB)
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "ewp_agent_") {
			return f
		}
	}
	t.Fatalf("agents add printed no credential:\n%s", out)
	return ""
}

// decisions are the log's records as ewp-audit exports them.
func (g *gateServer) decisions(t *testing.T) []map[string]any {
	t.Helper()
	out, err := exec.Command(g.bin+"/ewp-audit", "export", "--db", g.DB).Output()
	if err != nil {
		t.Fatalf("ewp-audit export: %v", err)
	}
	var ds []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		if d, ok := rec["decision"].(map[string]any); ok {
			rec = d
		}
		ds = append(ds, rec)
	}
	return ds
}

// decisionOf finds the decision on tool whose arguments name path.
func decisionOf(t *testing.T, ds []map[string]any, tool, path string) map[string]any {
	t.Helper()
	for _, d := range ds {
		args, _ := json.Marshal(d["arguments"])
		if d["tool_name"] == tool && bytes.Contains(args, []byte(path)) {
			return d
		}
	}
	t.Fatalf("no decision on %s naming %s among %d", tool, path, len(ds))
	return nil
}
