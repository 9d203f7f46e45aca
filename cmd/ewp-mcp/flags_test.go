package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/warrant"
)

// The deadline and limit flags reach the config, with the documented
// defaults, and nonsense values are refused.
func TestDeadlineAndLimitFlags(t *testing.T) {
	c, err := parseConfig([]string{"--db", "x"}, env())
	if err != nil || c.timeout != mcp.DefaultRequestTimeout || c.maxRequest != mcp.MaxBodyBytes || c.limits != (warrant.Limits{}) ||
		c.maxCalls != mcp.DefaultMaxConcurrentCalls() {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = parseConfig([]string{"--db", "x", "--request-timeout", "90s", "--max-request-bytes", "4096", "--max-concurrent-calls", "3",
		"--max-view-bytes", "1", "--max-records", "2", "--max-subjects", "3", "--max-string-bytes", "-1"}, env())
	want := warrant.Limits{MaxViewBytes: 1, MaxRecords: 2, MaxSubjects: 3, MaxStringBytes: -1}
	if err != nil || c.timeout != 90*time.Second || c.maxRequest != 4096 || c.limits != want || c.maxCalls != 3 {
		t.Fatalf("flags: %+v %v", c, err)
	}
	for _, args := range [][]string{{"--request-timeout", "0s"}, {"--request-timeout", "-1s"}, {"--max-request-bytes", "0"}, {"--max-concurrent-calls", "0"}} {
		if _, err := parseConfig(append([]string{"--db", "x"}, args...), env()); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: %v", args, err)
		}
	}
	if mcp.WriteTimeoutFor(90*time.Second) <= 90*time.Second || mcp.WriteTimeoutFor(time.Second) != 60*time.Second {
		t.Error("the HTTP write timeout must outlast the request deadline")
	}
}

// The bounds of approvals and replays reach the config, with package
// audit's defaults, and a non-positive one is refused.
func TestApprovalBoundFlags(t *testing.T) {
	c, err := parseConfig([]string{"--db", "x"}, env())
	if err != nil || c.approvalMaxLifetime != audit.DefaultMaxLifetime || c.replayWindow != audit.DefaultReplayWindow {
		t.Fatalf("defaults: %v %v %v", c.approvalMaxLifetime, c.replayWindow, err)
	}
	c, err = parseConfig([]string{"--db", "x", "--approval-max-lifetime", "2h", "--replay-window", "1m"}, env())
	if err != nil || c.approvalMaxLifetime != 2*time.Hour || c.replayWindow != time.Minute {
		t.Fatalf("flags: %v %v %v", c.approvalMaxLifetime, c.replayWindow, err)
	}
	for _, args := range [][]string{{"--approval-max-lifetime", "0s"}, {"--replay-window", "-1m"}} {
		if _, err := parseConfig(append([]string{"--db", "x"}, args...), env()); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// A short token is served with a warning on stderr saying why; a token of
// only whitespace, in the environment or in the file, stops the start
// instead of silently meaning "no token".
func TestIngestTokenStrength(t *testing.T) {
	db := ledgerFile(t)
	http := []string{"--db", db, "--http", "127.0.0.1:0"}
	if _, err := parseConfig(http, env("EWP_INGEST_TOKEN", " \t\n")); err == nil || !strings.Contains(err.Error(), "only whitespace") {
		t.Errorf("whitespace EWP_INGEST_TOKEN: %v", err)
	}
	blank := filepath.Join(t.TempDir(), "blank")
	_ = os.WriteFile(blank, []byte("   \n\t"), 0o600)
	if _, err := parseConfig(append(http, "--ingest-token-file", blank), env()); err == nil || !strings.Contains(err.Error(), "only whitespace") {
		t.Errorf("whitespace token file: %v", err)
	}
	c, err := parseConfig(http, env("EWP_INGEST_TOKEN", "x"))
	if err != nil || c.token != "x" || len(c.notes) != 1 || !strings.Contains(c.notes[0], "only 1 bytes") || !strings.Contains(c.notes[0], "guess") {
		t.Errorf("short token: %+v %v", c, err)
	}
	if c, err := parseConfig(http, env("EWP_INGEST_TOKEN", "0123456789abcdef")); err != nil || len(c.notes) != 0 {
		t.Errorf("a 16-byte token: %+v %v", c.notes, err)
	}
}

// --redact-arguments replaces the default list (nil in the config, which
// mcp reads as DefaultRedactedArguments); given empty, it redacts nothing;
// the usage text lists the default.
func TestRedactArgumentsFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, nil},
		{[]string{"--redact-arguments", "pin, otp ,"}, []string{"pin", "otp"}},
		{[]string{"--redact-arguments", ""}, []string{}},
	} {
		c, err := parseConfig(append([]string{"--db", "x"}, tc.args...), env())
		if err != nil || (c.redact == nil) != (tc.want == nil) || strings.Join(c.redact, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%v: %q %v", tc.args, c.redact, err)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(usage), ""), strings.Join(mcp.DefaultRedactedArguments, ",")) {
		t.Error("the usage text does not list the default redacted names")
	}
}
