package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/npmclients"
)

// The proof: the official @modelcontextprotocol/server-filesystem behind
// ewp-gateway, driven by the official TypeScript SDK client, with the
// gate's decisions checked on disk and in ewp-audit export.

// protectedPolicy blocks every write under the protected directory: the
// manifest gives such a write the concepts write and file (a path under
// it, canonicalised), which traverse the demo graph's write D2 → file
// edge this policy sits on; a write elsewhere names no concept.
const protectedPolicy = `@id("no_write_protected")
@source("write") @target("file") @source_depth("2")
forbid (principal, action, resource);

@id("no_move_protected")
@source("delete") @target("file") @source_depth("3")
forbid (principal, action, resource);
`

// world is one proof's files: the directory the filesystem server may
// touch, its protected part, the ledger and the operator's key.
type world struct {
	bin, dir, work, protected string
	ledger, key, config       string
}

func newWorld(t *testing.T, cs npmclients.Set) *world {
	t.Helper()
	w := &world{bin: bins(t), dir: t.TempDir()}
	w.dir, _ = filepath.EvalSymlinks(w.dir)
	w.work = filepath.Join(w.dir, "work")
	w.protected = filepath.Join(w.work, "protected")
	for _, d := range []string{w.protected, filepath.Join(w.work, "public")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(w.protected, "secret.txt"), []byte("keep"), 0o644))
	must(t, os.WriteFile(filepath.Join(w.work, "public", "hello.txt"), []byte("hello"), 0o644))
	// A link an agent may try to write through: work/link -> work/protected.
	must(t, os.Symlink(w.protected, filepath.Join(w.work, "link")))

	root, _ := filepath.Abs("../..")
	w.ledger = filepath.Join(w.dir, "ewp.sqlite")
	runProg(t, filepath.Join(w.bin, "ewp-ingest"), "--db", w.ledger, "--quiet", "--attest-trusted-origins",
		filepath.Join(root, "fixtures/examples/quickstart.json"))
	runProg(t, filepath.Join(w.bin, "ewp-ingest"), "--db", w.ledger, "--quiet", filepath.Join(root, "fixtures/graphs/filesystem-demo.json"))
	w.key = filepath.Join(w.dir, "operator.key")
	pub := runProg(t, filepath.Join(w.bin, "ewp-audit"), "keygen", "--name", "olive", "--out", w.key)
	must(t, os.WriteFile(filepath.Join(w.dir, "operator-keys"), []byte(lastLine(pub)+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(w.dir, "policies.cedar"), []byte(protectedPolicy), 0o644))
	return w
}

// fsConfig is a gateway in front of server-filesystem (fs) and the Go
// echo server (echo).
func (w *world) fsConfig(t *testing.T, cs npmclients.Set) {
	t.Helper()
	derive := func(arg, kind string) map[string]any {
		concepts := []string{"write", "file"}
		if kind == "delete" {
			concepts = []string{"delete", "file"}
		}
		return map[string]any{"argument": arg, "under": w.protected, "concepts": concepts}
	}
	cfg := map[string]any{
		"db":            w.ledger,
		"policies":      "policies.cedar",
		"operator_keys": "operator-keys",
		"console_url":   "http://127.0.0.1:8765/console/",
		"servers": map[string]any{
			"fs":   map[string]any{"command": cs.Node(), "args": []string{cs.Path("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), w.work}, "timeout": "20s"},
			"echo": map[string]any{"command": filepath.Join(w.bin, "mcpecho"), "timeout": "5s"},
		},
		"tools": []any{
			map[string]any{"match": "fs/edit_file", "deny": true},
			map[string]any{"match": "fs/write_file", "kind": "write", "risk": "medium", "reversible": true,
				"concepts": []any{derive("path", "write")}},
			map[string]any{"match": "fs/create_directory", "kind": "write", "risk": "low", "reversible": true,
				"concepts": []any{derive("path", "write")}},
			// server-filesystem has no delete tool: move_file stands in for
			// the destructive call (it removes the source), irreversible.
			map[string]any{"match": "fs/move_file", "kind": "delete", "risk": "high", "reversible": false,
				"concepts": []any{derive("source", "delete"), derive("destination", "write")}},
			map[string]any{"match": "fs/*", "kind": "read", "risk": "low", "reversible": true, "paths": []string{}},
			map[string]any{"match": "echo/echo", "kind": "read", "risk": "low", "reversible": true},
		},
		"default": "deny",
	}
	w.config = filepath.Join(w.dir, "gateway.json")
	writeJSON(t, w.config, cfg)
	out := runProg(t, filepath.Join(w.bin, "ewp-gateway"), "pin", "--config", w.config)
	if !strings.Contains(out, "pinned fs__write_file sha256 ") || !strings.Contains(out, "pinned echo__echo sha256 ") {
		t.Fatalf("ewp-gateway pin printed:\n%s", out)
	}
}

func TestProofFilesystemOverStdio(t *testing.T) {
	cs := clients(t)
	w := newWorld(t, cs)
	w.fsConfig(t, cs)
	a := newAgent(t, cs, "stdio", filepath.Join(w.bin, "ewp-gateway"), "--config", w.config)
	proveFilesystem(t, w, a)
	// The SDK client declared URL-mode elicitation: over stdio each
	// pending call also sent one, pointing at the decision's console page.
	el := a.elicitations()
	if len(el) == 0 || el[0]["mode"] != "url" || !strings.HasPrefix(el[0]["url"].(string), "http://127.0.0.1:8765/console/decision?id=") {
		t.Errorf("elicitations = %v, want URL mode at the console's decision page", el)
	}
}

func TestProofFilesystemOverHTTP(t *testing.T) {
	cs := clients(t)
	w := newWorld(t, cs)
	w.fsConfig(t, cs)
	u := httpGateway(t, w.bin, w.config)
	a := newAgent(t, cs, "http", u)
	proveFilesystem(t, w, a)
}

// proveFilesystem is the proof's sequence, the same over either transport.
func proveFilesystem(t *testing.T, w *world, a *agent) {
	names := a.toolNames()
	for _, want := range []string{"fs__read_text_file", "fs__write_file", "fs__move_file", "echo__echo"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	if slices.Contains(names, "fs__edit_file") {
		t.Errorf("tools/list shows fs__edit_file, which a deny rule covers: %v", names)
	}
	var decided []decision // every decision the agent was told of

	// Reading is allowed.
	r := a.call("fs__read_text_file", map[string]any{"path": filepath.Join(w.work, "public", "hello.txt")})
	if r.Err != "" || r.IsError || r.Text != "hello" || r.Decision == "" {
		t.Fatalf("read = %+v, want hello with a decision_id", r)
	}
	decided = append(decided, decision{r.Decision, "MAY_ACT"})

	// Writing outside the protected directory is allowed.
	r = a.call("fs__write_file", map[string]any{"path": filepath.Join(w.work, "public", "new.txt"), "content": "new"})
	if r.IsError || r.Err != "" {
		t.Fatalf("public write = %+v", r)
	}
	decided = append(decided, decision{r.Decision, "MAY_ACT"})
	if b, err := os.ReadFile(filepath.Join(w.work, "public", "new.txt")); err != nil || string(b) != "new" {
		t.Errorf("public write did not write: %q %v", b, err)
	}

	// Writing under it is refused, however the path is spelled, and the
	// file is untouched.
	secret := filepath.Join(w.protected, "secret.txt")
	for how, p := range map[string]string{
		"plain":        secret,
		"../":          filepath.Join(w.work, "public") + "/../protected/secret.txt",
		"symlink":      filepath.Join(w.work, "link", "secret.txt"),
		"double slash": w.work + "//protected/secret.txt",
		"dot segment":  w.work + "/./protected/secret.txt",
	} {
		r := a.call("fs__write_file", map[string]any{"path": p, "content": "overwritten"})
		if !r.IsError || !strings.Contains(r.Text, "DENY") || r.Decision == "" {
			t.Errorf("protected write (%s, %s) = %+v, want DENY with its decision", how, p, r)
		}
		decided = append(decided, decision{r.Decision, "DENY"})
	}
	if b, _ := os.ReadFile(secret); string(b) != "keep" {
		t.Errorf("protected file now holds %q", b)
	}

	// A destructive call needs confirmation: pending, approved once by
	// the operator, passes once, then pending again.
	src, dst := filepath.Join(w.work, "public", "hello.txt"), filepath.Join(w.work, "public", "moved.txt")
	move := map[string]any{"source": src, "destination": dst}
	r = a.call("fs__move_file", move)
	if !r.IsError || !strings.Contains(r.Text, "REQUIRE_CONFIRMATION") || r.Decision == "" ||
		!strings.Contains(r.Text, "`ewp-audit approve --db "+w.ledger+" --once "+r.Decision+"`") {
		t.Fatalf("move = %+v, want REQUIRE_CONFIRMATION naming its decision and the approve command", r)
	}
	pending := r.Decision
	decided = append(decided, decision{pending, "REQUIRE_CONFIRMATION"})
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("the pending move ran: %v", err)
	}
	out := runProg(t, filepath.Join(w.bin, "ewp-audit"), "approve", "--db", w.ledger, "--once", pending, "--key", w.key)
	if !strings.Contains(out, "approved decision "+pending) {
		t.Fatalf("approve printed %s", out)
	}
	r = a.call("fs__move_file", move)
	if r.IsError || r.Err != "" {
		t.Fatalf("approved retry = %+v, want it to pass", r)
	}
	decided = append(decided, decision{r.Decision, "MAY_ACT"})
	if _, err := os.Stat(dst); err != nil {
		t.Errorf("the approved move did not run: %v", err)
	}
	must(t, os.WriteFile(src, []byte("hello again"), 0o644)) // the same call could run again
	r = a.call("fs__move_file", move)
	if !r.IsError || !strings.Contains(r.Text, "REQUIRE_CONFIRMATION") || r.Decision == pending {
		t.Errorf("second identical move = %+v, want pending again under a new decision", r)
	}
	decided = append(decided, decision{r.Decision, "REQUIRE_CONFIRMATION"})
	other := map[string]any{"source": filepath.Join(w.work, "public", "new.txt"), "destination": dst + ".2"}
	r = a.call("fs__move_file", other)
	if !r.IsError || !strings.Contains(r.Text, "REQUIRE_CONFIRMATION") {
		t.Errorf("move of another path = %+v, want it not covered by the approval", r)
	}
	decided = append(decided, decision{r.Decision, "REQUIRE_CONFIRMATION"})
	r = a.call("fs__move_file", map[string]any{"source": secret, "destination": dst + ".3"})
	if !r.IsError || !strings.Contains(r.Text, "DENY") {
		t.Errorf("move of the protected file = %+v, want DENY", r)
	}
	decided = append(decided, decision{r.Decision, "DENY"})
	if b, _ := os.ReadFile(secret); string(b) != "keep" {
		t.Errorf("protected file now holds %q", b)
	}

	checkExport(t, w, decided)
}

// decision is one the agent was told of, with the outcome it was told.
type decision struct{ id, outcome string }

// checkExport finds every decision the agent was told of in ewp-audit
// export, with its outcome and, for a forwarded call, its result (ok);
// a call that was not forwarded has none.
func checkExport(t *testing.T, w *world, decided []decision) {
	t.Helper()
	var out string
	var byID map[string]map[string]any
	// A result is recorded just after its call is answered: the last
	// one may take a moment to land.
	for try := 0; ; try++ {
		out = runProg(t, filepath.Join(w.bin, "ewp-audit"), "export", "--db", w.ledger)
		byID = map[string]map[string]any{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("export line %q: %v", line, err)
			}
			byID[m["decision_id"].(string)] = m
		}
		last := decided[len(decided)-1]
		if _, ok := byID[last.id]; ok && allResults(byID, decided) || try == 50 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, want := range decided {
		d, ok := byID[want.id]
		switch {
		case !ok:
			t.Errorf("decision %d (%s) is not in the export", i, want.id)
			continue
		case d["tool"] != "tool_call" || d["outcome"] != want.outcome:
			t.Errorf("decision %s: tool %v outcome %v, want tool_call %s", want.id, d["tool"], d["outcome"], want.outcome)
		}
		forwarded := want.outcome == "MAY_ACT"
		if got := hasResult(d, "ok"); got != forwarded {
			t.Errorf("decision %s (%s): ok result in the export %v, want %v: %v", want.id, want.outcome, got, forwarded, d["results"])
		}
	}
	if t.Failed() {
		t.Logf("export:\n%s", out)
	}
}

// allResults: every forwarded call's result is in the export.
func allResults(byID map[string]map[string]any, decided []decision) bool {
	for _, d := range decided {
		if d.outcome == "MAY_ACT" && !hasResult(byID[d.id], "ok") {
			return false
		}
	}
	return true
}

func hasResult(d map[string]any, status string) bool {
	for _, r := range asList(d["results"]) {
		if m, ok := r.(map[string]any); ok && m["status"] == status {
			return true
		}
	}
	return false
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	must(t, err)
	must(t, os.WriteFile(path, b, 0o644))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
