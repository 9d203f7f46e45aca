package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// policyWorld is echoWorld with the config's call_policies and budgets:
// agent bot may call 3 times a minute, and no member of group ops may call
// echo/echo. It returns the config and a credential per agent.
func policyWorld(t *testing.T) (bin, config string, creds map[string]string) {
	t.Helper()
	bin, config = echoWorld(t)
	dir := filepath.Dir(config)
	var cfg map[string]any
	raw, err := os.ReadFile(config)
	must(t, err)
	must(t, json.Unmarshal(raw, &cfg))
	must(t, os.WriteFile(filepath.Join(dir, "budgets.json"), []byte(`{"agents":{"bot":{"calls_per_minute":3}}}`), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "calls.cedar"),
		[]byte(`@id("no_echo_for_ops") forbid (principal in Group::"ops", action, resource == Tool::"echo/echo");`), 0o644))
	cfg["budgets"], cfg["call_policies"] = "budgets.json", "calls.cedar" // relative: read against the config's directory
	writeJSON(t, config, cfg)
	creds = map[string]string{}
	for name, group := range map[string]string{"bot": "ci", "op": "ops", "dev": "dev"} {
		out := runProg(t, filepath.Join(bin, "ewp-audit"), "agents", "add", name, "--group", group, "--db", cfg["db"].(string))
		for _, f := range strings.Fields(out) {
			if strings.HasPrefix(f, "ewp_agent_") {
				creds[name] = f
			}
		}
		if creds[name] == "" {
			t.Fatalf("agents add %s printed no credential:\n%s", name, out)
		}
	}
	return bin, config, creds
}

// callAs posts one tools/call of echo__echo with cred and returns the
// result's text.
func callAs(t *testing.T, u, cred string) string {
	t.Helper()
	code, body, _ := postCall(t, u, cred)
	if code != 200 {
		t.Fatalf("tools/call: %d %s", code, body)
	}
	b := []byte(body)
	var msg struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	must(t, json.Unmarshal(b, &msg))
	if len(msg.Result.Content) == 0 {
		t.Fatalf("tools/call: no content in %s", b)
	}
	return msg.Result.Content[0].Text
}

// The config's budgets and call policies are layers of the gateway's
// gate: bot's fourth call of a minute under a budget of 3 is DENY with
// the budget's reason, and the call policy on group ops refuses its
// member op and not dev.
func TestConfigBudgetsAndCallPolicies(t *testing.T) {
	bin, config, creds := policyWorld(t)
	u := httpGateway(t, bin, config)
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 15*time.Second {
		time.Sleep(left + 100*time.Millisecond) // the four calls in one minute
	}
	for i := range 3 {
		if got := callAs(t, u, creds["bot"]); got != "hi" {
			t.Fatalf("bot's call %d of 3: %q, want it forwarded", i+1, got)
		}
	}
	got := callAs(t, u, creds["bot"])
	if !strings.HasPrefix(got, "DENY:") || !strings.Contains(got, "budget.calls_per_minute: 3 of 3 used by agent bot in the minute from ") {
		t.Errorf("bot's fourth call: %q, want DENY with the budget's reason", got)
	}
	got = callAs(t, u, creds["op"])
	if !strings.HasPrefix(got, "DENY:") || !strings.Contains(got, `call policy "no_echo_for_ops" forbids echo/echo for agent op`) {
		t.Errorf("a member of ops: %q, want DENY by the call policy", got)
	}
	if got := callAs(t, u, creds["dev"]); got != "hi" {
		t.Errorf("a member of dev: %q, want it forwarded", got)
	}
}

// Budgets keep their counts in the decision log: a config with budgets
// and "audit": "off" does not start, and says which keys clash.
func TestBudgetsWithoutADecisionLogRefused(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "gw.json")
	must(t, os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"default":{"calls_per_minute":1}}`), 0o644))
	must(t, os.WriteFile(p, []byte(`{"db":"l.sqlite","audit":"off","budgets":"b.json","servers":{"a":{"command":"x"}},"tools":[]}`), 0o644))
	var errb strings.Builder
	if code := run(context.Background(), []string{"--config", p}, strings.NewReader(""), io.Discard, &errb); code != 1 {
		t.Fatalf("exit %d, want 1 (%s)", code, errb.String())
	}
	if want := `"budgets" keep their counts in the decision log; they need one ("audit" is "off")`; !strings.Contains(errb.String(), want) {
		t.Errorf("stderr %q lacks %q", errb.String(), want)
	}
}
