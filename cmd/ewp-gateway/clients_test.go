package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/npmclients"
)

// The pinned Claude Code and OpenClaw (scripts/clients/claude-openclaw)
// are given the gateway as a stdio MCP server the way QUICKSTART.md
// does it by hand, each with its own throwaway HOME and config: `claude
// mcp list` shows the gate connected, and `openclaw mcp probe` lists the
// gateway's SERVER__TOOL tools, only those the manifest could permit.
// The downstream is the Go echo server with its fault tools, so no
// package but the clients is needed, and nothing is called: listing
// only.
func TestClaudeAndOpenClawListTheGateway(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the clients run POSIX programs")
	}
	cs := npmclients.Require(t, "claude-openclaw", "node_modules/.bin/claude", "node_modules/.bin/openclaw")
	bin, config := listWorld(t)
	gateway := filepath.Join(bin, "ewp-gateway")

	t.Run("claude", func(t *testing.T) {
		home := t.TempDir()
		project := filepath.Join(home, "project")
		must(t, os.MkdirAll(project, 0o755))
		env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, "claude"),
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1"}
		claude := cs.Path("node_modules/.bin/claude")
		clientRun(t, project, env, claude, "mcp", "add", "gate", "--", gateway, "--config", config)
		// A control the same client cannot connect: the check below
		// tells a connected server from one that is merely configured.
		clientRun(t, project, env, claude, "mcp", "add", "broken", "--", gateway, "--config", filepath.Join(home, "absent.json"))
		out := clientRun(t, project, env, claude, "mcp", "list")
		if line := lineOf(out, "gate: "); !strings.Contains(line, gateway+" --config "+config) || !strings.Contains(line, "✔ Connected") {
			t.Errorf("claude mcp list: the gate line is %q, want it connected\n%s", line, out)
		}
		if line := lineOf(out, "broken: "); !strings.Contains(line, "Failed to connect") {
			t.Errorf("claude mcp list: the broken control is %q, want it failed to connect\n%s", line, out)
		}
	})

	t.Run("openclaw", func(t *testing.T) {
		home := t.TempDir()
		env := []string{"HOME=" + home, "OPENCLAW_STATE_DIR=" + filepath.Join(home, "state"),
			"OPENCLAW_CONFIG_PATH=" + filepath.Join(home, "openclaw.json")}
		openclaw := cs.Path("node_modules/.bin/openclaw")
		clientRun(t, home, env, openclaw, "mcp", "add", "gate", "--command", gateway, "--arg", "--config", "--arg", config)
		out := clientRun(t, home, env, openclaw, "mcp", "probe", "gate", "--json")
		var probe struct {
			Servers map[string]struct {
				Tools int `json:"tools"`
			} `json:"servers"`
			Tools       []string `json:"tools"`
			Diagnostics []any    `json:"diagnostics"`
		}
		if err := json.Unmarshal([]byte(out), &probe); err != nil {
			t.Fatalf("openclaw mcp probe --json: %v\n%s", err, out)
		}
		// OpenClaw names an MCP tool SERVER__TOOL after its own server
		// name: the gateway's echo__echo is gate__echo__echo to it.
		want := []string{"gate__echo__echo", "gate__echo__hang"}
		got := slices.Clone(probe.Tools)
		slices.Sort(got)
		if !slices.Equal(got, want) || probe.Servers["gate"].Tools != len(want) || len(probe.Diagnostics) != 0 {
			t.Errorf("openclaw mcp probe: tools %v (gate: %d), diagnostics %v; want %v\n%s",
				got, probe.Servers["gate"].Tools, probe.Diagnostics, want, out)
		}
	})
}

// listWorld is a gateway config in front of mcpecho --faults, pinned
// first with `ewp-gateway pin`: the manifest permits echo/echo and
// echo/hang, and its default deny hides die, flood and rug_pull.
func listWorld(t *testing.T) (bin, config string) {
	t.Helper()
	bin = bins(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	root, _ := filepath.Abs("../..")
	ledger := filepath.Join(dir, "ewp.sqlite")
	runProg(t, filepath.Join(bin, "ewp-ingest"), "--db", ledger, "--quiet", "--attest-trusted-origins",
		filepath.Join(root, "fixtures/examples/quickstart.json"))
	config = filepath.Join(dir, "gateway.json")
	writeJSON(t, config, map[string]any{
		"db": ledger,
		"servers": map[string]any{"echo": map[string]any{
			"command": filepath.Join(bin, "mcpecho"), "args": []string{"--faults"}, "timeout": "5s"}},
		"tools": []any{
			map[string]any{"match": "echo/echo", "kind": "read", "risk": "low", "reversible": true},
			map[string]any{"match": "echo/hang", "kind": "read", "risk": "low", "reversible": true},
		},
		"default": "deny",
	})
	out := runProg(t, filepath.Join(bin, "ewp-gateway"), "pin", "--config", config)
	if !strings.Contains(out, "pinned echo__echo sha256 ") || !strings.Contains(out, "pinned echo__hang sha256 ") {
		t.Fatalf("ewp-gateway pin printed:\n%s", out)
	}
	return bin, config
}

// clientRun runs a client command in dir with only env (and a PATH with
// the set's node) and a deadline, and returns its stdout. The proxy
// variables point at a closed loopback port, so a client that tries the
// network fails there instead of reaching out.
func clientRun(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + filepath.Dir(name) + ":/usr/local/bin:/usr/bin:/bin", "NO_COLOR=1",
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9",
		"http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9"}, env...)
	// A grandchild holding the pipes open must not outlive the deadline.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s %s: %v", filepath.Base(name), strings.Join(args[:2], " "), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), tailOf(stderr.String(), 3000))
	}
	return stdout.String()
}

// lineOf is the first line of s that begins with prefix, or "".
func lineOf(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
