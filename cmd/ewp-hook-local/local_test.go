package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	auditsqlite "github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/internal/hookflags"
	ledgersqlite "github.com/ewp-go/ewp/ledger/sqlite"
)

// TestLocalModeHasTheOperatorsLayers: the local hook judges with the
// call policies and budgets ewp-mcp takes: agent bot may call twice a
// minute, and no member of group ops may run Bash. Each refusal is DENY
// naming its layer's reason, and on record.
func TestLocalModeHasTheOperatorsLayers(t *testing.T) {
	dir := t.TempDir()
	db := localWorld(t, dir, map[string]string{"bot": "ci", "op": "ops"})
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	tools := write("tools.json", `{"default":"deny","tools":[
		{"match":"claude-code/Read","kind":"read","risk":"low","reversible":true},
		{"match":"claude-code/Bash","kind":"exec","risk":"low","reversible":true}]}`)
	budgets := write("budgets.json", `{"agents":{"bot":{"calls_per_minute":2}}}`)
	callPolicies := write("calls.cedar", `@id("no_bash_for_ops") forbid (principal in Group::"ops", action, resource == Tool::"claude-code/Bash");`)

	calls := 0 // each call its own tool_use_id: the same one is a replay
	ask := func(agent, tool, input string) string {
		t.Helper()
		calls++
		in := `{"hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"t` + strconv.Itoa(calls) + `","cwd":"/","tool_name":"` + tool + `","tool_input":` + input + `}`
		var out, errb bytes.Buffer
		code := run([]string{"claude-code", "--db", db, "--tools", tools, "--agent", agent, "--budgets", budgets, "--call-policies", callPolicies},
			strings.NewReader(in), &out, &errb)
		if code != 0 {
			t.Fatalf("%s %s: exit %d: %s", agent, tool, code, errb.String())
		}
		var a struct {
			Out struct {
				Decision string `json:"permissionDecision"`
				Reason   string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		must(t, json.Unmarshal(out.Bytes(), &a))
		return a.Out.Decision + ": " + a.Out.Reason
	}
	read := `{"file_path":"/etc/hosts"}`
	// calls_per_minute counts within a minute of the clock: bot's three
	// calls must fall in one.
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 5*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
	for i := 0; i < 2; i++ {
		if got := ask("bot", "Read", read); !strings.HasPrefix(got, "allow:") {
			t.Fatalf("call %d of bot's 2 a minute: %s", i+1, got)
		}
	}
	if got := ask("bot", "Read", read); !strings.HasPrefix(got, "deny:") || !strings.Contains(got, "budget.calls_per_minute: 2 of 2 used by agent bot") {
		t.Errorf("bot's third call in a minute: %s", got)
	}
	if got := ask("op", "Bash", `{"command":"ls"}`); !strings.HasPrefix(got, "deny:") || !strings.Contains(got, "no_bash_for_ops") {
		t.Errorf("op's Bash: %s", got)
	}
	if got := ask("op", "Read", read); !strings.HasPrefix(got, "allow:") {
		t.Errorf("op's Read: %s", got)
	}
	r, err := auditsqlite.Open(auditsqlite.DefaultPath(db), auditsqlite.Options{ReadOnly: true})
	must(t, err)
	defer r.Close()
	all, err := r.List(context.Background(), audit.Filter{})
	must(t, err)
	var outcomes []string
	for _, d := range all {
		outcomes = append(outcomes, d.Agent+" "+string(d.Outcome))
	}
	want := "bot MAY_ACT,bot MAY_ACT,bot DENY,op DENY,op MAY_ACT"
	if got := strings.Join(outcomes, ","); got != want {
		t.Errorf("recorded %s, want %s", got, want)
	}
}

// A budgets file without the log's counters, or a bad one, blocks with
// the file named.
func TestLocalModeRefusesABadBudgetsFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "budgets.json")
	must(t, os.WriteFile(bad, []byte(`{"agents":{"bot":{"calls_a_minute":2}}}`), 0o644))
	db := localWorld(t, dir, map[string]string{"bot": "ci"})
	tools := filepath.Join(dir, "tools.json")
	must(t, os.WriteFile(tools, []byte(`{"default":"deny","tools":[]}`), 0o644))
	var out, errb bytes.Buffer
	code := run([]string{"claude-code", "--db", db, "--tools", tools, "--agent", "bot", "--budgets", bad},
		strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{}}`), &out, &errb)
	if code != exitBlock || !strings.Contains(errb.String(), bad) || out.Len() != 0 {
		t.Fatalf("exit %d, stderr %q, stdout %q", code, errb.String(), out.String())
	}
}

// localWorld is an empty ledger in dir and its decision log beside it,
// with the agents named (each in the group given); it returns the
// ledger's path.
func localWorld(t *testing.T, dir string, agents map[string]string) string {
	t.Helper()
	db := filepath.Join(dir, "l.db")
	l, err := ledgersqlite.Create(db, ledgersqlite.Options{})
	must(t, err)
	must(t, l.Close())
	log, err := auditsqlite.OpenOrCreate(auditsqlite.DefaultPath(db), auditsqlite.Options{})
	must(t, err)
	defer log.Close()
	for name, group := range agents {
		_, sum, _ := audit.NewAgentCredential()
		must(t, log.AddAgent(context.Background(), &audit.AgentRecord{Name: name, Groups: []string{group}, CredentialSHA256: sum}))
	}
	return db
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The approval hint names the log without a database URL's password.
func TestApproveWhereHidesThePassword(t *testing.T) {
	url := "postgres://ewp:hunter2@db.example/ewp?sslmode=disable"
	for _, f := range []localFlags{{Local: hookflags.Local{DB: url}}, {Local: hookflags.Local{DB: "l.db", Audit: url}}} {
		w := approveWhere(f)
		if strings.Contains(w.DB, "hunter2") || !strings.Contains(w.DB, "db.example") {
			t.Errorf("%+v: %q", f.Local, w.DB)
		}
	}
	if w := approveWhere(localFlags{Local: hookflags.Local{DB: "/srv/l.db"}}); w.DB != "--db /srv/l.db" {
		t.Errorf("a file: %q", w.DB)
	}
}
