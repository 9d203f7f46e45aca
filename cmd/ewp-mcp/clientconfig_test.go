package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// config prints, for each client, what it takes to start this server:
// the binary and every file flag as absolute paths (a client starts the
// server from a directory of its own), the other flags as given.
func TestConfigPrintsEachClientsForm(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("ewp.sqlite", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("my policies.cedar", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, _ = filepath.EvalSymlinks(bin)
	db := filepath.Join(dir, "ewp.sqlite")
	pol := filepath.Join(dir, "my policies.cedar")
	flags := []string{"--db", "ewp.sqlite", "--policies=my policies.cedar", "--tool-names", "reference"}

	r := runWith(t, append([]string{"config", "claude-code"}, flags...), env(), "")
	want := "claude mcp add ewp -- " + bin + " --db " + db + " --policies '" + pol + "' --tool-names reference\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("claude-code: exit %d\n got %q\nwant %q\n%s", r.code, r.stdout, want, r.stderr)
	}

	r = runWith(t, append([]string{"config", "claude-desktop", "--name", "evidence"}, flags...), env(), "")
	var desktop struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &desktop); err != nil || r.code != 0 {
		t.Fatalf("claude-desktop: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	s := desktop.MCPServers["evidence"]
	if s.Command != bin || strings.Join(s.Args, "|") != "--db|"+db+"|--policies|"+pol+"|--tool-names|reference" {
		t.Errorf("claude-desktop: %+v", desktop)
	}

	r = runWith(t, []string{"config", "openclaw", "--db", "ewp.sqlite"}, env(), "")
	if want := "openclaw mcp add ewp --command " + bin + " --arg --db --arg " + db + "\n"; r.code != 0 || r.stdout != want {
		t.Errorf("openclaw: exit %d\n got %q\nwant %q", r.code, r.stdout, want)
	}

	// Over HTTP the clients connect to the URL; Claude Desktop's file
	// takes stdio servers only.
	for client, want := range map[string]string{
		"claude-code": "claude mcp add --transport http ewp http://127.0.0.1:8765/mcp\n",
		"openclaw":    "openclaw mcp add ewp --url http://127.0.0.1:8765/mcp --transport streamable-http\n",
	} {
		if r := runWith(t, []string{"config", client, "--db", "ewp.sqlite", "--http", "8765"}, env(), ""); r.code != 0 || r.stdout != want {
			t.Errorf("%s over HTTP: exit %d %q", client, r.code, r.stdout)
		}
	}
	if r := runWith(t, []string{"config", "claude-desktop", "--db", "ewp.sqlite", "--http", "8765"}, env(), ""); r.code != 2 || !strings.Contains(r.stderr, "stdio servers only") {
		t.Errorf("claude-desktop over HTTP: exit %d %s", r.code, r.stderr)
	}
}

// Flags the server would refuse are refused now, not when the client
// starts it; a password is never printed; an unknown client is named; a
// ledger that does not exist yet is pointed out.
func TestConfigRefuses(t *testing.T) {
	db := ledgerFile(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "vscode", "--db", db}, `unknown client "vscode"`},
		{[]string{"config", "claude-code"}, "--db PATH is required"},
		{[]string{"config", "claude-code", "--db", db, "--policies", "/nonexistent.cedar"}, "cannot read it"},
		{[]string{"config", "claude-code", "--db", "postgres://u:hunter2@h/db"}, "holds a password"},
	} {
		r := runWith(t, c.args, env(), "")
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stdout+r.stderr, "hunter2") {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
	missing := filepath.Join(t.TempDir(), "new.sqlite")
	if r := runWith(t, []string{"config", "claude-code", "--db", missing}, env(), ""); r.code != 0 || !strings.Contains(r.stderr, missing+" does not exist yet") {
		t.Errorf("missing ledger: exit %d %s", r.code, r.stderr)
	}
}

// The help's examples run as written on a fresh machine: no relative
// --db handed to a client, ~/.ewp made before a file is written in it,
// and the proposition they ask about is one the examples file holds.
func TestHelpExamplesRunAsWritten(t *testing.T) {
	r := runWith(t, []string{"--help"}, env(), "")
	if strings.Contains(r.stdout, "--db ./") || strings.Contains(r.stdout, "ewp.db") {
		t.Error("--help shows a relative ./ ledger path or ewp.db")
	}
	if i, j := strings.Index(r.stdout, "mkdir -p -m 700 ~/.ewp"), strings.Index(r.stdout, "> ~/.ewp/"); i < 0 || j < i {
		t.Error("--help writes into ~/.ewp before making it")
	}
	examples, err := os.ReadFile("../../fixtures/examples/quickstart.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"P-db-major-version"} {
		if !strings.Contains(r.stdout, id) || !strings.Contains(string(examples), `"`+id+`"`) {
			t.Errorf("%s: in --help and in the examples file?", id)
		}
	}
	if !strings.Contains(r.stdout, "Exit status:") || !strings.Contains(r.stdout, "config claude-code") {
		t.Error("--help lacks the exit status or the config command")
	}
}
