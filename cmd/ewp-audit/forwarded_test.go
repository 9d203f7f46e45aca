package main

import (
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
)

// forwardedCall is a pending tool_call decision, as the gateway or a
// client hook records one.
func forwardedCall(i int) *audit.Decision {
	d := pending("", i)
	d.Tool, d.ToolName, d.Agent = audit.ToolCall, "fs/move_file", "bot"
	return d
}

// Approving a forwarded call (tool_call: the gateway's, a hook's) tells
// the operator the identical call now passes once, with no approval id to
// hand the agent; a may_act decision keeps its approval_id hint; an
// approval of a forwarded call that is not --once says it lets nothing
// through.
func TestApproveHintForAForwardedCall(t *testing.T) {
	db, ds := seeded(t, forwardedCall(1), pending("P-db", 2), forwardedCall(3))
	out, _ := wantExit(t, exitOK, "approve", "--db", db, ds[0].ID, "--once", "--key", opKey("alice"))
	for _, want := range []string{"covers       once: the identical call (same agent, tool and arguments), one time",
		"The identical call (fs/move_file, same agent and arguments) now passes once", "no approval id to handle"} {
		if !strings.Contains(out, want) {
			t.Errorf("approve --once of a tool_call lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "may_act") || strings.Contains(out, `"approval_id"`) {
		t.Errorf("approve --once of a tool_call sends the agent to may_act:\n%s", out)
	}
	out, _ = wantExit(t, exitOK, "approve", "--db", db, ds[1].ID, "--once", "--key", opKey("alice"))
	if !strings.Contains(out, `The agent repeats its may_act call with "approval_id": `) || strings.Contains(out, "identical call") {
		t.Errorf("approve --once of a may_act:\n%s", out)
	}
	out, _ = wantExit(t, exitOK, "approve", "--db", db, ds[2].ID, "--scope-tool", "fs/move_file", "--until", "1h", "--key", opKey("alice"))
	if !strings.Contains(out, "this approval does not let it through. Approve the decision with --once.") || strings.Contains(out, "may_act") {
		t.Errorf("a scope approval of a tool_call:\n%s", out)
	}
}
