package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/modeltest"
)

// Real Claude Code in -p mode, its model a stand-in that replays one
// Write, with the settings `ewp-hook claude-code install --write` makes:
// the http hook, the command hook forwarding to the same server, and the
// command hook deciding over the same ledger and log itself. A
// Write under protected/ is blocked by the gate and the file is absent
// afterwards; another Write creates its file; both decisions are in the
// log under the agent that asked.
func TestClaudeCodeHooks(t *testing.T) {
	claude := clientBin(t, "claude")
	g := startGate(t)
	token := g.addAgent(t, hookAgent)
	tools, _ := filepath.Abs("testdata/tools.json")
	policies, _ := filepath.Abs("testdata/protected.cedar")
	for _, kind := range []string{"http", "command", "local"} {
		t.Run(kind, func(t *testing.T) {
			project := realDir(t)
			args := []string{"claude-code", "install", "--write", "--settings", filepath.Join(project, ".claude", "settings.json")}
			switch kind {
			case "http":
				args = append(args, "--url", g.URL)
			case "command":
				args = append(args, "--url", g.URL, "--command")
			case "local": // the command hook over the same ledger and log, no server asked
				args = append(args, "--db", g.DB, "--tools", tools, "--policies", policies, "--agent", hookAgent)
			}
			runCmd(t, g.bin+"/ewp-hook", args...)
			protected := filepath.Join(project, "protected", "secret-"+kind+".txt")
			allowed := filepath.Join(project, "notes-"+kind+".txt")
			os.MkdirAll(filepath.Dir(protected), 0o755)

			blocked := claudeWrite(t, claude, token, project, protected)
			if _, err := os.Stat(protected); !os.IsNotExist(err) {
				t.Fatalf("the protected file exists after a blocked Write (stat: %v)", err)
			}
			if !anyContains(blocked, "ewp: DENY (decision_id ") || !anyContains(blocked, "no_write_protected") {
				t.Errorf("the tool result does not carry the gate's reason: %q", blocked)
			}
			claudeWrite(t, claude, token, project, allowed)
			if b, err := os.ReadFile(allowed); err != nil || string(b) != "written by the stand-in\n" {
				t.Fatalf("the allowed Write did not create its file: %q, %v", b, err)
			}

			ds := g.decisions(t)
			deny, allow := decisionOf(t, ds, "claude-code/Write", protected), decisionOf(t, ds, "claude-code/Write", allowed)
			if deny["outcome"] != "DENY" || allow["outcome"] != "MAY_ACT" {
				t.Errorf("outcomes %v and %v, want DENY and MAY_ACT", deny["outcome"], allow["outcome"])
			}
			for _, d := range []map[string]any{deny, allow} {
				if d["agent"] != hookAgent {
					t.Errorf("decision %v: agent %v, want %s", d["decision_id"], d["agent"], hookAgent)
				}
			}
		})
	}
}

// A Bash call (high-risk and irreversible in the manifest) is pending:
// blocked, naming the approval. Once the operator approves it with
// ewp-audit approve --once, the same agent's identical call runs once;
// the next identical call is pending again.
func TestClaudeCodeApproveOnce(t *testing.T) {
	claude := clientBin(t, "claude")
	g := startGate(t)
	token := g.addAgent(t, hookAgent)
	project := realDir(t)
	runCmd(t, g.bin+"/ewp-hook", "claude-code", "install", "--url", g.URL, "--write", "--settings", filepath.Join(project, ".claude", "settings.json"))
	marker := filepath.Join(project, "deployed")
	bash := func() []string {
		input, _ := json.Marshal(map[string]string{"command": "touch " + marker})
		return claudeTool(t, claude, token, project, "Bash", input)
	}
	results := bash()
	if _, err := os.Stat(marker); !os.IsNotExist(err) || !anyContains(results, "REQUIRE_CONFIRMATION") {
		t.Fatalf("the pending Bash ran, or was not pending: stat %v, results %q", err, results)
	}
	id := decisionIDIn(t, results)
	runCmd(t, g.bin+"/ewp-audit", "approve", id, "--once", "--db", g.DB, "--key", g.Key)
	bash()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the approved Bash did not run: %v", err)
	}
	os.Remove(marker)
	if results := bash(); !anyContains(results, "REQUIRE_CONFIRMATION") {
		t.Errorf("the approval passed a second call: %q", results)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the second identical Bash ran (stat: %v)", err)
	}
}

// decisionIDIn is the decision_id a gate's reason names.
func decisionIDIn(t *testing.T, results []string) string {
	t.Helper()
	for _, r := range results {
		if _, after, ok := strings.Cut(r, "(decision_id "); ok {
			if id, _, ok := strings.Cut(after, ")"); ok {
				return id
			}
		}
	}
	t.Fatalf("no decision_id in %q", results)
	return ""
}

// hookAgent is the agent the tests' Claude Code runs as.
const hookAgent = "claude-bot"

// claudeWrite runs one claude -p turn whose model asks to Write path, and
// returns the tool results Claude Code sent back to the model.
func claudeWrite(t *testing.T, claude, token, project, path string) []string {
	t.Helper()
	input, _ := json.Marshal(map[string]string{"file_path": path, "content": "written by the stand-in\n"})
	return claudeTool(t, claude, token, project, "Write", input)
}

// claudeTool runs one claude -p turn whose model calls tool with input.
func claudeTool(t *testing.T, claude, token, project, tool string, input json.RawMessage) []string {
	t.Helper()
	model := modeltest.Anthropic(t, modeltest.Script{Tool: tool, Input: input, Text: "done"})
	home := t.TempDir()
	// --max-turns and the deadline end a turn that loops (a stand-in
	// answering the tool call again and again) instead of hanging the test.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "use the tool", "--output-format", "json", "--max-turns", "4")
	cmd.Dir = project
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, "claude"),
		"ANTHROPIC_BASE_URL=" + model.URL, "ANTHROPIC_API_KEY=sk-stand-in", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "EWP_AGENT_TOKEN=" + token}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
	var res struct {
		Result string `json:"result"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Result != "done" {
		t.Fatalf("claude -p did not finish its turn: %v\n%s", err, out)
	}
	return model.ToolResults()
}

// realDir is a temporary directory by its real path (the manifest and
// the policies see paths resolved).
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func anyContains(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
