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

// Real OpenClaw: the plugin in integrations/openclaw installed with
// `openclaw plugins install --link` is listed loaded and enabled by
// `plugins list --json`; `openclaw agent --local` turns, their model a
// stand-in provider replaying one write, have the write under protected/
// blocked (the file absent) and another allowed (the file written), as
// the gate decided and recorded.
func TestOpenClawPlugin(t *testing.T) {
	openclaw := clientBin(t, "openclaw")
	g := startGate(t)
	oc := &openClaw{bin: openclaw, home: realDir(t), gate: g.URL, token: g.addAgent(t, "openclaw-bot")}
	oc.work = filepath.Join(oc.home, "work")
	os.MkdirAll(filepath.Join(oc.work, "protected"), 0o755)
	plugin, _ := filepath.Abs("../../integrations/openclaw")
	oc.configure(t, "http://127.0.0.1:1/unused")
	oc.run(t, "plugins", "install", "--link", plugin, "--force", "--accept-capabilities")
	if p := oc.listed(t); p["enabled"] != true || p["status"] != "loaded" {
		t.Fatalf("plugins list: ewp-gate is %v / %v, want enabled and loaded", p["enabled"], p["status"])
	}

	// One turn, two writes (a turn costs OpenClaw a minute or more).
	protected, allowed := filepath.Join(oc.work, "protected", "secret.txt"), filepath.Join(oc.work, "notes.txt")
	results := oc.write(t, protected, allowed)
	if _, err := os.Stat(protected); !os.IsNotExist(err) {
		t.Fatalf("the protected file exists after a blocked write (stat: %v)", err)
	}
	if !anyContains(results, "ewp: DENY (decision_id ") || !anyContains(results, "no_write_protected") {
		t.Errorf("the tool results do not carry the gate's reason: %q", results)
	}
	if b, err := os.ReadFile(allowed); err != nil || string(b) != "written by the stand-in\n" {
		t.Fatalf("the allowed write did not create its file: %q, %v", b, err)
	}
	ds := g.decisions(t)
	if d := decisionOf(t, ds, "openclaw/write", protected); d["outcome"] != "DENY" || d["agent"] != "openclaw-bot" {
		t.Errorf("the protected write: %v by %v, want DENY by openclaw-bot", d["outcome"], d["agent"])
	}
	if d := decisionOf(t, ds, "openclaw/write", allowed); d["outcome"] != "MAY_ACT" || d["agent"] != "openclaw-bot" {
		t.Errorf("the allowed write: %v by %v, want MAY_ACT by openclaw-bot", d["outcome"], d["agent"])
	}
}

type openClaw struct {
	bin, home, work, gate, token string
}

// configure writes OpenClaw's config: the plugin's gate URL, and a custom
// provider at model (an OpenAI-compatible stand-in) as the default model.
func (oc *openClaw) configure(t *testing.T, model string) {
	t.Helper()
	path := filepath.Join(oc.home, "openclaw.json")
	cfg := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		json.Unmarshal(b, &cfg)
	}
	plugins, _ := cfg["plugins"].(map[string]any)
	if plugins == nil {
		plugins = map[string]any{}
	}
	entries, _ := plugins["entries"].(map[string]any)
	if entries == nil {
		entries = map[string]any{}
	}
	entries["ewp-gate"] = map[string]any{"enabled": true, "config": map[string]any{"url": oc.gate}}
	plugins["entries"] = entries
	cfg["plugins"] = plugins
	cfg["models"] = map[string]any{"mode": "merge", "providers": map[string]any{"standin": map[string]any{
		"baseUrl": model + "/v1", "apiKey": "sk-stand-in", "api": "openai-completions",
		"models": []any{map[string]any{"id": "stand-in", "name": "stand-in", "reasoning": false, "input": []string{"text"},
			"cost":          map[string]int{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
			"contextWindow": 128000, "maxTokens": 4096}}}}}
	cfg["agents"] = map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "standin/stand-in"}, "workspace": oc.work}}
	b, _ := json.MarshalIndent(cfg, "", " ")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (oc *openClaw) run(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, oc.bin, args...)
	cmd.Dir = oc.work
	cmd.Env = []string{"PATH=" + filepath.Dir(oc.bin) + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + oc.home,
		"OPENCLAW_STATE_DIR=" + filepath.Join(oc.home, "state"), "OPENCLAW_CONFIG_PATH=" + filepath.Join(oc.home, "openclaw.json"),
		"EWP_AGENT_TOKEN=" + oc.token, "NO_COLOR=1"}
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("openclaw %s: %v\n%s\n%s", strings.Join(args, " "), err, out, tail(stderr, 3000))
	}
	return out
}

// listed is the plugin's row of `plugins list --json`.
func (oc *openClaw) listed(t *testing.T) map[string]any {
	t.Helper()
	var list struct {
		Plugins []map[string]any `json:"plugins"`
	}
	out := oc.run(t, "plugins", "list", "--json")
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("plugins list --json: %v\n%s", err, tail(out, 2000))
	}
	for _, p := range list.Plugins {
		if p["id"] == "ewp-gate" {
			return p
		}
	}
	t.Fatalf("plugins list --json has no ewp-gate among %d plugins", len(list.Plugins))
	return nil
}

// write runs one agent turn whose model asks to write each path (in one
// answer), and returns the tool results OpenClaw sent back to the model.
func (oc *openClaw) write(t *testing.T, paths ...string) []string {
	t.Helper()
	var inputs []json.RawMessage
	for _, p := range paths {
		in, _ := json.Marshal(map[string]string{"path": p, "content": "written by the stand-in\n"})
		inputs = append(inputs, in)
	}
	model := modeltest.OpenAI(t, modeltest.Script{Tool: "write", Input: inputs[0], More: inputs[1:], Text: "done"})
	oc.configure(t, model.URL)
	oc.run(t, "agent", "--local", "--agent", "main", "--session-key", "turn-"+filepath.Base(paths[0]), "--message", "write the files", "--json")
	return model.ToolResults()
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
