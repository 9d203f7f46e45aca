package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const preInput = `{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/a"}}`

func hookRun(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errs bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errs)
	return code, out.String(), errs.String()
}

// The command hook prints the server's answer, sending the agent's
// token, and exits 2 with a reason on every failure.
func TestForward(t *testing.T) {
	var gotAuth, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		if strings.Contains(gotBody, "boom") {
			http.Error(w, "exploded\x1b[2J", http.StatusInternalServerError)
			return
		}
		if strings.Contains(gotBody, "text") {
			w.Write([]byte("not json"))
			return
		}
		w.Write([]byte(`{"hookSpecificOutput":{"permissionDecision":"allow"}}`))
	}))
	defer srv.Close()
	t.Setenv(tokenEnv, "ewp_agent_secret")
	code, out, _ := hookRun(t, preInput, "claude-code", "--url", srv.URL)
	if code != 0 || !strings.Contains(out, `"allow"`) || gotAuth != "Bearer ewp_agent_secret" || gotBody != preInput {
		t.Errorf("forward: %d %q auth %q body %q", code, out, gotAuth, gotBody)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("ewp_agent_fromfile\n"), 0o600)
	if code, _, _ := hookRun(t, preInput, "claude-code", "--url", srv.URL, "--token-file", tokenFile); code != 0 || gotAuth != "Bearer ewp_agent_fromfile" {
		t.Errorf("--token-file: %d, auth %q", code, gotAuth)
	}
	for name, c := range map[string]struct{ stdin, url, says string }{
		"500":          {`{"x":"boom"}`, srv.URL, `exploded\x1b[2J`},
		"not json":     {`{"x":"text"}`, srv.URL, "not a JSON object"},
		"unreachable":  {preInput, "http://127.0.0.1:1", "did not answer"},
		"bad url":      {preInput, "::", "--url"},
		"over a limit": {strings.Repeat(" ", maxInput+1), srv.URL, "over"},
	} {
		code, out, errs := hookRun(t, c.stdin, "claude-code", "--url", c.url)
		if code != exitBlock || out != "" || !strings.Contains(errs, "ewp-hook: blocked: ") || !strings.Contains(errs, c.says) ||
			strings.Contains(errs, "ewp_agent_secret") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errs)
		}
	}
	if code, _, _ := hookRun(t, preInput, "claude-code"); code != exitBlock {
		t.Errorf("no --url: exit %d", code)
	}
}

// install's settings make every failure a block, with absolute paths;
// --write keeps the other settings and replaces only its own entries.
func TestInstall(t *testing.T) {
	code, out, _ := hookRun(t, "", "claude-code", "install", "--url", "http://127.0.0.1:8765/")
	var printed struct {
		Hooks map[string][]struct {
			Matcher string           `json:"matcher"`
			Hooks   []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &printed) != nil || len(printed.Hooks) != 3 {
		t.Fatalf("install: %d %s", code, out)
	}
	for ev, ms := range printed.Hooks {
		h := ms[0].Hooks[0]
		if ms[0].Matcher != "*" || h["onFailure"] != "block" || h["type"] != "http" || h["url"] != "http://127.0.0.1:8765/hooks/claude-code" {
			t.Errorf("%s: %v", ev, h)
		}
	}
	settings := filepath.Join(t.TempDir(), ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte(`{"model":"x","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"/bin/mine"}]}]}}`), 0o644)
	for i := 0; i < 2; i++ {
		if code, _, errs := hookRun(t, "", "claude-code", "install", "--url", "http://127.0.0.1:8765", "--command", "--write", "--settings", settings); code != 0 {
			t.Fatalf("--write: %d %s", code, errs)
		}
	}
	var got map[string]any
	b, _ := os.ReadFile(settings)
	json.Unmarshal(b, &got)
	pre := got["hooks"].(map[string]any)["PreToolUse"].([]any)
	if got["model"] != "x" || len(pre) != 2 || pre[0].(map[string]any)["matcher"] != "Bash" {
		t.Fatalf("merged settings: %s", b)
	}
	h := pre[1].(map[string]any)["hooks"].([]any)[0].(map[string]any)
	if h["type"] != "command" || h["onFailure"] != "block" || !filepath.IsAbs(h["command"].(string)) {
		t.Errorf("command hook: %v", h)
	}
	// The local mode's command hook names every file absolutely.
	code, out, _ = hookRun(t, "", "claude-code", "install", "--db", "l.db", "--tools", "t.json", "--agent", "bot",
		"--budgets", "b.json", "--call-policies", "c.cedar")
	var local struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &local) != nil {
		t.Fatalf("install --db: %d %s", code, out)
	}
	args := strings.Join(local.Hooks["PreToolUse"][0].Hooks[0].Args, " ")
	wd, _ := os.Getwd()
	if !strings.Contains(args, "--db "+filepath.Join(wd, "l.db")) || !strings.Contains(args, "--agent bot") ||
		!strings.Contains(args, "--tools "+filepath.Join(wd, "t.json")) || !strings.Contains(args, "--budgets "+filepath.Join(wd, "b.json")) ||
		!strings.Contains(args, "--call-policies "+filepath.Join(wd, "c.cedar")) {
		t.Errorf("local command hook args: %s", args)
	}
	for _, bad := range [][]string{{"--url", "ftp://x"}, {"--db", "l.db"}, {"--db", "l.db", "--url", "http://x", "--tools", "t", "--agent", "a"}} {
		if code, _, _ := hookRun(t, "", append([]string{"claude-code", "install"}, bad...)...); code != exitBlock {
			t.Errorf("install %v: exit %d", bad, code)
		}
	}
	if code, _, _ := hookRun(t, "", "claude-code", "install", "--url", "ftp://x"); code != exitBlock {
		t.Errorf("a non-http URL: exit %d", code)
	}
}

// --help is for a person: the usage on stdout and exit 0, wherever it is
// asked; anything else unusable is still a block.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"claude-code", "--help"}, {"claude-code", "install", "-h"}} {
		code, out, _ := hookRun(t, "", args...)
		if code != exitOK || !strings.Contains(out, "ewp-hook claude-code install") {
			t.Errorf("%v: exit %d, stdout %.60q", args, code, out)
		}
	}
	if code, _, errs := hookRun(t, "", "frobnicate"); code != exitBlock || !strings.Contains(errs, "Usage") && !strings.Contains(errs, "ewp-hook claude-code") {
		t.Errorf("an unknown command: exit %d, %q", code, errs)
	}
}
