package hook

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/manifest"
)

// The hooks over the real gate, a memory log and a manifest: each
// decision is recorded under the agent that asked; a high-risk call is
// pending until the operator approves it once, then passes once; a call
// no rule matches is recorded as refused; a result is recorded for the
// agent's own decision only.
func TestClaudeCodeOverTheGate(t *testing.T) {
	ctx := context.Background()
	log := memlog.New(nil)
	op := audittest.NewOperator("alice")
	g, err := gate.New(gate.Config{Log: log, OperatorKeys: op.Keys})
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse([]byte(`{"default": "deny", "tools": [
	  {"match": "claude-code/Read", "kind": "read", "risk": "low", "reversible": true},
	  {"match": "claude-code/Bash", "kind": "exec", "risk": "high", "reversible": false}]}`))
	if err != nil {
		t.Fatal(err)
	}
	j := &GateJudge{Gate: g, Describe: ManifestDescribe(m), Log: log}
	ask := func(c Caller, body string) (string, string) {
		t.Helper()
		out, err := ClaudeCode(ctx, j, c, []byte(body), Where{DB: "--db l.db"})
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return decision(t, out)
	}
	call := func(tool, id, input string) string {
		return `{"hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"` + id + `","cwd":"/",` +
			`"tool_name":"` + tool + `","tool_input":` + input + `}`
	}

	if d, why := ask(bot, call("Read", "t1", `{"file_path":"/etc/hosts"}`)); d != "allow" || !strings.Contains(why, "MAY_ACT") {
		t.Errorf("Read: %s %q", d, why)
	}
	d, why := ask(bot, call("Bash", "t2", `{"command":"make deploy"}`))
	if d != "deny" || !strings.Contains(why, "REQUIRE_CONFIRMATION") || !strings.Contains(why, "ewp-audit approve ") {
		t.Fatalf("Bash: %s %q", d, why)
	}
	id := strings.Fields(why[strings.Index(why, "decision_id ")+len("decision_id "):])[0]
	id = strings.TrimSuffix(id, "):")
	if err := op.Approve(ctx, log, &audit.Approval{ID: "ap-1", DecisionID: id, Verdict: audit.Approved, Approver: "alice",
		Once: true, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if d, why := ask(bot, call("Bash", "t3", `{"command":"make deploy"}`)); d != "allow" {
		t.Errorf("the approved call: %s %q, want allow once", d, why)
	}
	if d, _ := ask(bot, call("Bash", "t4", `{"command":"make deploy"}`)); d != "deny" {
		t.Errorf("the approved call again: %s, want pending again", d)
	}
	if d, why := ask(bot, call("Edit", "t5", `{}`)); d != "deny" || !strings.Contains(why, CodeDeniedByManifest) && !strings.Contains(why, "default is deny") {
		t.Errorf("Edit: %s %q", d, why)
	}

	ds, err := log.List(ctx, audit.Filter{})
	if err != nil || len(ds) != 5 {
		t.Fatalf("%d decisions, %v", len(ds), err)
	}
	for _, d := range ds {
		if d.Agent != "bot" || d.Caller.ClientName != EntranceClaudeCode {
			t.Errorf("decision %s: agent %q, client %q", d.ID, d.Agent, d.Caller.ClientName)
		}
	}

	post := `{"hook_event_name":"PostToolUse","session_id":"s","tool_use_id":"t1","tool_name":"Read","tool_input":{"file_path":"/etc/hosts"},"tool_response":"x"}`
	eve := Caller{Principal: audit.Principal{Name: "eve"}, Credential: "agent:bot"}
	if _, err := ClaudeCode(ctx, j, eve, []byte(post), Where{}); err == nil {
		t.Error("another agent recorded a result for bot's call")
	}
	if _, err := ClaudeCode(ctx, j, bot, []byte(post), Where{}); err != nil {
		t.Fatal(err)
	}
	readID, _ := j.Recorded(ctx, bot, "claude-code:s:t1")
	if rs, err := log.ResultsFor(ctx, readID); err != nil || len(rs) != 1 || rs[0].Status != audit.ResultOK {
		t.Errorf("results of %s: %+v, %v", readID, rs, err)
	}
}

// A gate without a decision log ("audit": "off", ewp-mcp --audit off)
// judges the hooks' calls all the same: the idempotency key a hook derives
// from the client's call id is for finding the decision again, which
// without a log there is no need to do, so it is not the agent's to drop.
func TestHooksOverAGateWithoutALog(t *testing.T) {
	g, err := gate.New(gate.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse([]byte(`{"default": "deny", "tools": [
	  {"match": "claude-code/Read", "kind": "read", "risk": "low", "reversible": true},
	  {"match": "claude-code/Bash", "kind": "exec", "risk": "high", "reversible": false}]}`))
	if err != nil {
		t.Fatal(err)
	}
	j := &GateJudge{Gate: g, Describe: ManifestDescribe(m)}
	for tool, want := range map[string]string{"Read": "allow", "Bash": "deny"} {
		body := `{"hook_event_name":"PreToolUse","session_id":"s","tool_use_id":"t-` + tool + `","cwd":"/",` +
			`"tool_name":"` + tool + `","tool_input":{"file_path":"/etc/hosts","command":"make"}}`
		out, err := ClaudeCode(context.Background(), j, bot, []byte(body), Where{})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		d, why := decision(t, out)
		if d != want || strings.Contains(why, "idempotency_key") {
			t.Errorf("%s without a log: %s %q, want %s", tool, d, why, want)
		}
	}
}
