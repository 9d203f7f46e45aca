package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	auditsqlite "github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/fixtures"
)

// register opens the SQLite decision log beside db as ewp-audit does (the
// server opens the same file) and adds the agents, name → groups, as
// `ewp-audit agents add` does; it returns the open log (the operator's
// side: approvals are written through it) and each agent's credential.
func register(t *testing.T, db string, agents map[string][]string) (*auditsqlite.Log, map[string]string) {
	t.Helper()
	l, err := auditsqlite.OpenOrCreate(auditsqlite.DefaultPath(db), auditsqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	creds := map[string]string{}
	for name, groups := range agents {
		cred, sum, err := audit.NewAgentCredential()
		if err != nil {
			t.Fatal(err)
		}
		if err := l.AddAgent(context.Background(), &audit.AgentRecord{Name: name, Groups: groups, CredentialSHA256: sum}); err != nil {
			t.Fatal(err)
		}
		creds[name] = cred
	}
	return l, creds
}

// callAs sends one tools/call to url with token as its bearer credential
// ("" sends none: the anonymous caller) and returns the reply.
func callAs(t testing.TB, url, token, tool string, args map[string]any) toolReply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(callBody(1, tool, args)))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d %s", tool, resp.StatusCode, b)
	}
	_, r := decodeReply(t, b)
	return r
}

// opsKeepSrv is an edge policy on the group ops: its members may not
// delete under /srv; nobody else is touched by it.
const opsKeepSrv = `
@id("ops_keep_srv")
@source("delete") @target("file") @source_depth("3")
forbid (principal in Group::"ops", action, resource)
when { context.arguments.path like "/srv/*" };
`

// TestTwoAgentsOnOneServer: the real ewp-mcp over HTTP on a ledger with
// its SQLite decision log, three agents (ops-1 and ops-2 in group ops,
// dev-1 in dev) and the anonymous caller. Each reads only its own
// decisions; an operator's approval of ops-1's call is refused to every
// other caller with APPROVAL_WRONG_AGENT (without being spent) and lifts
// ops-1's; one widened with --any-agent lifts anyone's; and an edge policy
// on the group ops judges its members only.
func TestTwoAgentsOnOneServer(t *testing.T) {
	db := demoLedgerFile(t)
	reg, creds := register(t, db, map[string][]string{"ops-1": {"ops"}, "ops-2": {"ops"}, "dev-1": {"dev"}})
	creds["anonymous"] = ""
	p := startMCP(t, "--db", db, "--policies", writePolicies(t, string(fixtures.DemoPolicies)+opsKeepSrv),
		"--operator-keys", keysFile(t), "--http", "127.0.0.1:0")
	const pid = "P-api-cert-valid" // the warrant allows; the demo policy asks for protected files
	protected := deleteOn(pid, "rm", "protected/report.txt")
	ask := func(t *testing.T, who string) string {
		t.Helper()
		r := callAs(t, p.url, creds[who], "may_act", protected)
		id, _ := r.out["decision_id"].(string)
		if r.out["decision"] != "REQUIRE_CONFIRMATION" || id == "" {
			t.Fatalf("%s: want REQUIRE_CONFIRMATION with a decision_id: %+v", who, r)
		}
		return id
	}
	approve := func(t *testing.T, a *audit.Approval) string {
		t.Helper()
		a.Verdict = audit.Approved
		if err := audittest.NewOperator("alice").Approve(context.Background(), reg, a); err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	present := func(t *testing.T, who, approval, want, reason string) {
		t.Helper()
		r := callAs(t, p.url, creds[who], "may_act", with(protected, "approval_id", approval))
		if _, why := approvalLayerOf(r.out); r.out["decision"] != want || !strings.HasPrefix(why, reason+":") {
			t.Errorf("%s presents %s: want %s with %s, got %v / %q", who, approval, want, reason, r.out["decision"], why)
		}
	}

	t.Run("own decisions", func(t *testing.T) {
		ids := map[string]string{}
		for who := range creds {
			ids[who] = ask(t, who)
		}
		for reader, cred := range creds {
			for owner, id := range ids {
				r := callAs(t, p.url, cred, "decision_get", map[string]any{"decision_id": id})
				if reader != owner {
					if r.code != "EWP_REFUSE_UNKNOWN_DECISION" {
						t.Errorf("%s reads %s's decision: code %q, answer holds a decision %v", reader, owner, r.code, r.out["decision"] != nil)
					}
					continue
				}
				d, _ := r.out["decision"].(map[string]any)
				agent, recorded := d["agent"]
				if r.code != "" || (owner == "anonymous" && recorded) || (owner != "anonymous" && agent != owner) {
					t.Errorf("%s reads its own decision: code %q, agent %v (recorded %v)", owner, r.code, agent, recorded)
				}
			}
		}
		// The log's records, as the operator reads them: an anonymous
		// call's record has no agent field at all.
		for owner, id := range ids {
			d, err := reg.Decision(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(d)
			if owner == "anonymous" {
				if d.Agent != "" || strings.Contains(string(b), `"agent`) {
					t.Errorf("the anonymous call's record names an agent: %s", b)
				}
			} else if d.Agent != owner || d.Caller.Credential != "agent:"+owner {
				t.Errorf("%s's record: agent %q caller %+v", owner, d.Agent, d.Caller)
			}
		}
	})

	t.Run("approval bound to its agent", func(t *testing.T) {
		once := approve(t, &audit.Approval{DecisionID: ask(t, "ops-1"), Once: true})
		if a, err := reg.Approval(context.Background(), once); err != nil || a.Agent != "ops-1" || a.AnyAgent {
			t.Fatalf("the approval on record: %+v %v", a, err)
		}
		for _, who := range []string{"dev-1", "ops-2", "anonymous"} { // ops-2: a group mate is another agent
			present(t, who, once, "REQUIRE_CONFIRMATION", "APPROVAL_WRONG_AGENT")
		}
		present(t, "ops-1", once, "MAY_ACT", "APPROVED") // the refusals did not spend it
		present(t, "ops-1", once, "REQUIRE_CONFIRMATION", "APPROVAL_USED")
	})

	t.Run("approval for any agent", func(t *testing.T) {
		onceAny := approve(t, &audit.Approval{DecisionID: ask(t, "ops-1"), Once: true, AnyAgent: true})
		present(t, "dev-1", onceAny, "MAY_ACT", "APPROVED")
		present(t, "ops-1", onceAny, "REQUIRE_CONFIRMATION", "APPROVAL_USED")
		scopeAny := approve(t, &audit.Approval{DecisionID: ask(t, "ops-1"), AnyAgent: true,
			Scope: &audit.Scope{PropositionID: pid, ToolName: "rm"}, Until: time.Now().Add(time.Hour)})
		for _, who := range []string{"ops-1", "dev-1", "anonymous"} {
			present(t, who, scopeAny, "MAY_ACT", "APPROVED")
		}
	})

	t.Run("edge policy on a group", func(t *testing.T) {
		want := map[string]string{"ops-1": "DENY", "ops-2": "DENY", "dev-1": "MAY_ACT", "anonymous": "MAY_ACT"}
		for who, decision := range want {
			r := callAs(t, p.url, creds[who], "may_act", deleteOn(pid, "rm", "/srv/data/x"))
			fired := slices.Contains(violatedPolicies(r.out), "ops_keep_srv")
			if r.out["decision"] != decision || fired != (decision == "DENY") {
				t.Errorf("%s deletes under /srv: %v, ops_keep_srv fired %v (%+v)", who, r.out["decision"], fired, r.out["layers"])
			}
		}
	})
}

// violatedPolicies lists the policy_id of each violation the
// edge_policies layer of a may_act answer reports.
func violatedPolicies(out map[string]any) []string {
	var ids []string
	layers, _ := out["layers"].([]any)
	for _, l := range layers {
		lo := l.(map[string]any)
		if lo["layer"] != "edge_policies" {
			continue
		}
		detail, _ := lo["detail"].(map[string]any)
		vs, _ := detail["violations"].([]any)
		for _, v := range vs {
			id, _ := v.(map[string]any)["policy_id"].(string)
			ids = append(ids, id)
		}
	}
	return ids
}
