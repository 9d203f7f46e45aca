package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ewp-go/ewp/internal/hookflags"
)

// marker tags the hook entries install writes, so a second --write
// replaces them instead of adding more.
const marker = "ewp gate"

// hookEvents are the events install hooks: the decision, and the two
// results.
var hookEvents = []string{"PreToolUse", "PostToolUse", "PostToolUseFailure"}

type installFlags struct {
	url, tokenFile, settings string
	command, write           bool
	timeout                  int
	// The local mode's flags (a command hook over --db).
	local hookflags.Local
}

func install(args []string, stdout, stderr io.Writer) int {
	var f installFlags
	fs := flag.NewFlagSet("ewp-hook claude-code install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.url, "url", "", "")
	fs.StringVar(&f.tokenFile, "token-file", "", "")
	fs.StringVar(&f.settings, "settings", filepath.Join(".claude", "settings.json"), "")
	fs.BoolVar(&f.command, "command", false, "")
	fs.BoolVar(&f.write, "write", false, "")
	fs.IntVar(&f.timeout, "timeout", 10, "")
	f.local.Register(fs)
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || (f.url == "") == (f.local.DB == "") || f.timeout <= 0 {
		fmt.Fprint(stderr, usage)
		return exitBlock
	}
	entry, err := hookEntry(f)
	if err != nil {
		fmt.Fprintln(stderr, "ewp-hook claude-code install:", err)
		return exitBlock
	}
	if !f.write {
		out, _ := json.MarshalIndent(map[string]any{"hooks": hooksBlock(nil, entry)}, "", "  ")
		fmt.Fprintf(stdout, "%s\n", out)
		return exitOK
	}
	if err := writeSettings(f.settings, entry); err != nil {
		fmt.Fprintln(stderr, "ewp-hook claude-code install:", err)
		return exitBlock
	}
	fmt.Fprintf(stdout, "wrote the ewp hooks (%s) into %s\n", strings.Join(hookEvents, ", "), f.settings)
	return exitOK
}

// hookEntry is the one hook every event runs: the http hook, or this
// binary as a command hook (exec form: no shell), with "onFailure":
// "block" so that an unreachable server, a 500, a timeout or a crash
// blocks the tool (Claude Code lets it run otherwise).
func hookEntry(f installFlags) (map[string]any, error) {
	h := map[string]any{"onFailure": "block", "timeout": f.timeout + 5, "statusMessage": marker}
	if f.local.DB != "" {
		return localEntry(f, h)
	}
	base := strings.TrimSuffix(f.url, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, errors.New("--url must be an http:// or https:// URL")
	}
	if !f.command {
		h["type"], h["url"] = "http", base+endpoint
		h["headers"] = map[string]string{"Authorization": "Bearer $" + tokenEnv}
		h["allowedEnvVars"] = []string{tokenEnv}
		return h, nil
	}
	self, err := selfPath()
	if err != nil {
		return nil, err
	}
	args := []string{"claude-code", "--url", base, "--timeout", fmt.Sprint(f.timeout)}
	if f.tokenFile != "" {
		abs, err := filepath.Abs(f.tokenFile)
		if err != nil {
			return nil, err
		}
		args = append(args, "--token-file", abs)
	}
	h["type"], h["command"], h["args"] = "command", self, args
	return h, nil
}

// hooksBlock is hooks (a settings file's "hooks", nil for none) with the
// ewp entry on every hooked event, earlier ewp entries removed.
func hooksBlock(hooks map[string]any, entry map[string]any) map[string]any {
	if hooks == nil {
		hooks = map[string]any{}
	}
	for _, ev := range hookEvents {
		var kept []any
		if list, ok := hooks[ev].([]any); ok {
			for _, m := range list {
				if !isOurs(m) {
					kept = append(kept, m)
				}
			}
		}
		hooks[ev] = append(kept, map[string]any{"matcher": "*", "hooks": []any{entry}})
	}
	return hooks
}

func isOurs(matcher any) bool {
	m, _ := matcher.(map[string]any)
	hs, _ := m["hooks"].([]any)
	for _, h := range hs {
		if hm, _ := h.(map[string]any); hm["statusMessage"] == marker {
			return true
		}
	}
	return false
}

// writeSettings merges the entry into the settings file, keeping every
// other setting and hook.
func writeSettings(path string, entry map[string]any) error {
	settings := map[string]any{}
	raw, err := os.ReadFile(path)
	switch {
	case err == nil && len(bytes.TrimSpace(raw)) > 0:
		if err := json.Unmarshal(raw, &settings); err != nil {
			return fmt.Errorf("%s is not a JSON object: %w", path, err)
		}
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return err
	}
	hooks, _ := settings["hooks"].(map[string]any)
	settings["hooks"] = hooksBlock(hooks, entry)
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".ewp-tmp"
	if err := os.WriteFile(tmp, append(out, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// localEntry is the command hook deciding over a local ledger: every
// file it names by its absolute path, so the hook runs from any cwd.
func localEntry(f installFlags, h map[string]any) (map[string]any, error) {
	if f.local.Tools == "" || f.local.Agent == "" {
		return nil, errors.New("with --db, --tools FILE and --agent NAME are required")
	}
	self, err := selfPath()
	if err != nil {
		return nil, err
	}
	self = filepath.Join(filepath.Dir(self), localBin) // run directly: one process per tool call
	args := []string{"claude-code", "--agent", f.local.Agent, "--timeout", fmt.Sprint(f.timeout)}
	for _, p := range f.local.Files() {
		v := p[1]
		if !strings.Contains(v, "://") { // a PostgreSQL URL stays as it is
			if v, err = filepath.Abs(v); err != nil {
				return nil, err
			}
		}
		args = append(args, p[0], v)
	}
	h["type"], h["command"], h["args"] = "command", self, args
	return h, nil
}

// selfPath is this binary's absolute, resolved path.
func selfPath() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(self)
}
