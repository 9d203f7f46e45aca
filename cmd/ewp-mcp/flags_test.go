package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/warrant"
)

// The deadline and limit flags reach the config, with the documented
// defaults, and nonsense values are refused.
func TestDeadlineAndLimitFlags(t *testing.T) {
	c, err := parseConfig([]string{"--db", "x"}, env())
	if err != nil || c.timeout != mcp.DefaultRequestTimeout || c.maxRequest != mcp.MaxBodyBytes || c.limits != (warrant.Limits{}) {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = parseConfig([]string{"--db", "x", "--request-timeout", "90s", "--max-request-bytes", "4096",
		"--max-view-bytes", "1", "--max-records", "2", "--max-subjects", "3", "--max-string-bytes", "-1"}, env())
	want := warrant.Limits{MaxViewBytes: 1, MaxRecords: 2, MaxSubjects: 3, MaxStringBytes: -1}
	if err != nil || c.timeout != 90*time.Second || c.maxRequest != 4096 || c.limits != want {
		t.Fatalf("flags: %+v %v", c, err)
	}
	for _, args := range [][]string{{"--request-timeout", "0s"}, {"--request-timeout", "-1s"}, {"--max-request-bytes", "0"}} {
		if _, err := parseConfig(append([]string{"--db", "x"}, args...), env()); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: %v", args, err)
		}
	}
	if mcp.WriteTimeoutFor(90*time.Second) <= 90*time.Second || mcp.WriteTimeoutFor(time.Second) != 60*time.Second {
		t.Error("the HTTP write timeout must outlast the request deadline")
	}
}
