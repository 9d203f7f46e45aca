package main

import (
	"strings"
	"testing"
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
