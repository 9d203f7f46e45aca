package main

import (
	"strings"
	"testing"
	"time"
)

func TestPolicyLayerFilesRefusedAtStart(t *testing.T) {
	db := graphLedger(t)
	budgets := writePolicies(t, `{"default":{"calls_per_minute":2}}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--audit", "off", "--budgets", budgets}, "budgets need a decision log to keep their counts in (not --audit off)"},
		{[]string{"--budgets", writePolicies(t, `{"agents":{"bot":{"calls":1}}}`)}, "budgets: agents.bot.calls: unknown member (known: calls_per_minute, high_risk_per_day, irreversible_per_day)"},
		{[]string{"--call-policies", writePolicies(t, `@id("p") permit (principal, action, resource);`)}, "the call-policy file is not valid:"},
		{[]string{"--call-policies", "/nonexistent.cedar"}, "--call-policies"},
		{[]string{"--budgets", "/nonexistent.json"}, "--budgets"},
	} {
		code, _, stderr := process(t, "", append([]string{"--db", db}, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q lacks %q", tc.args, code, stderr, tc.want)
		}
	}
}

// ewp-mcp --budgets keeps the counts in its decision log: two irreversible
// actions a day pass, and the third is DENY in the next process on the
// same files, with the budget layer's reason.
func TestBudgetsAcrossARestart(t *testing.T) {
	if now := time.Now().UTC(); now.Add(30*time.Second).Day() != now.Day() {
		time.Sleep(31 * time.Second) // not across midnight UTC: a new day starts a new count
	}
	db := graphLedger(t)
	args := []string{"--db", db, "--budgets", writePolicies(t, `{"default":{"irreversible_per_day":2}}`)}
	r := session(t, args, deleteCall("/tmp/a"), deleteCall("/tmp/b"))
	if r[0]["decision"] != "MAY_ACT" || r[1]["decision"] != "MAY_ACT" {
		t.Fatalf("the first two: %v / %v", r[0], r[1])
	}
	r = session(t, args, deleteCall("/tmp/c"))
	if r[0]["decision"] != "DENY" {
		t.Fatalf("the third, after a restart: %v", r[0])
	}
	var budget map[string]any
	for _, l := range r[0]["layers"].([]any) {
		if l := l.(map[string]any); l["layer"] == "budget" {
			budget = l
		}
	}
	reasons, _ := budget["reasons"].([]any)
	if len(reasons) != 1 || !strings.HasPrefix(reasons[0].(string), "budget.irreversible_per_day: 2 of 2 used by agent anonymous in the day ") {
		t.Fatalf("budget layer %v", budget)
	}
}
