package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/warrant"
)

// loggedServer is a test server with an in-memory decision log.
func loggedServer(t testing.TB, opts ...Option) (*Server, *memlog.Log, *fakeStore) {
	t.Helper()
	ml := memlog.New(func() time.Time { return testNow })
	srv, st := newTestServer(t, append([]Option{WithDecisionLog(testLog(ml))}, opts...)...)
	return srv, ml, st
}

// confirmArgs asks about an action P-tentative's warrant answers with
// REQUIRE_CONFIRMATION.
func confirmArgs() obj {
	return obj{"proposition_id": "P-tentative", "action": action(warrant.RiskMedium, true)}
}

func decisionID(t testing.TB, out obj) string {
	t.Helper()
	id, _ := out["decision_id"].(string)
	if id == "" {
		t.Fatalf("no decision_id in %v", out)
	}
	return id
}

// alice is the operator whose key the test servers trust (testKeys).
var alice = audittest.NewOperator("alice")

// testLog is the decision log configuration of a test server over l,
// trusting alice's key.
func testLog(l audit.Log) DecisionLog { return DecisionLog{Log: l, OperatorKeys: alice.Keys} }

// approve is what ewp-audit approve does: an operator's approval, signed
// with alice's key, written through the Log API.
func approve(t testing.TB, l audit.Log, a audit.Approval) string {
	t.Helper()
	if a.Verdict == "" {
		a.Verdict = audit.Approved
	}
	if err := alice.Approve(context.Background(), l, &a); err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// approvalLayer returns the approval layer's decision and first reason.
func approvalOf(t testing.TB, out obj) (decision, reason string, detail obj) {
	t.Helper()
	l := layer(out, "approval")
	if l == nil {
		t.Fatalf("no approval layer in %v", out["layers"])
	}
	rs := reasons(l)
	if len(rs) == 0 {
		t.Fatal("an approval layer without reasons")
	}
	detail, _ = l["detail"].(obj)
	return l["decision"].(string), rs[0], detail
}

// The loop of issue #12 over both transports: REQUIRE_CONFIRMATION with a
// decision_id, an operator's single-use approval, MAY_ACT with the
// approval layer, and the same approval again refused as used.
func TestApprovalLoop(t *testing.T) {
	for _, d := range dialers {
		t.Run(d.name, func(t *testing.T) {
			srv, ml, _ := loggedServer(t)
			c := d.dial(t, srv, false)
			first := mustOK(t, call(t, c, "may_act", confirmArgs()))
			if first["decision"] != string(warrant.RequireConfirmation) {
				t.Fatalf("want REQUIRE_CONFIRMATION, got %v", first)
			}
			asked := decisionID(t, first)
			ap := approve(t, ml, audit.Approval{DecisionID: asked, Once: true, Approver: "alice"})

			args := mergeObj(confirmArgs(), obj{"approval_id": ap})
			lifted := mustOK(t, call(t, c, "may_act", args))
			dec, why, detail := approvalOf(t, lifted)
			if lifted["decision"] != string(warrant.MayActDecision) || dec != string(warrant.MayActDecision) || !strings.HasPrefix(why, ReasonApproved+":") {
				t.Fatalf("the approval did not lift the decision: %v", lifted)
			}
			if detail["approver"] != "alice" || detail["approval_id"] != ap || detail["once"] != true || detail["decision_id"] != asked {
				t.Errorf("approval detail: %v", detail)
			}
			if l := layer(lifted, "warrant"); l["decision"] != string(warrant.RequireConfirmation) {
				t.Errorf("the warrant layer must still say what the evidence says: %v", l)
			}
			if by, ok := ml.UsedBy(ap); !ok || by != decisionID(t, lifted) {
				t.Errorf("approval used by %q, want %q", by, lifted["decision_id"])
			}

			again := mustOK(t, call(t, c, "may_act", args))
			dec, why, _ = approvalOf(t, again)
			if again["decision"] != string(warrant.RequireConfirmation) || dec != string(warrant.RequireConfirmation) || !strings.HasPrefix(why, ReasonApprovalUsed+":") {
				t.Fatalf("a used approval was accepted again: %v", again)
			}

			rec := mustOK(t, call(t, c, "decision_get", obj{"decision_id": decisionID(t, lifted)}))
			d := rec["decision"].(obj)
			if d["outcome"] != string(audit.OutcomeMayAct) || d["approval_id"] != ap || rec["approval_used"].(obj)["approver"] != "alice" {
				t.Errorf("decision_get: %v", rec)
			}
			asked1 := mustOK(t, call(t, c, "decision_get", obj{"decision_id": asked}))
			if trail := asked1["approvals"].([]any); len(trail) != 1 || trail[0].(obj)["approval_id"] != ap {
				t.Errorf("approval trail of %s: %v", asked, asked1["approvals"])
			}
		})
	}
}

// Every way an approval can fail to lift the decision, each with its named
// reason; the gate's decision stays what the evidence says. Each case
// answers a REQUIRE_CONFIRMATION decision of its own (a decision is
// answered once), and the operator answered an hour before the calls, so
// an approval can expire between the two.
func TestApprovalRefusals(t *testing.T) {
	ml := memlog.New(func() time.Time { return testNow.Add(-time.Hour) })
	srv, st := newTestServer(t, WithDecisionLog(testLog(ml)))
	c := dialInProcess(t, srv)
	later := testNow.Add(time.Hour)
	onConflict := obj{"proposition_id": "P-conflict", "action": action(warrant.RiskLow, true)}
	cases := []struct {
		name   string
		ap     audit.Approval
		args   obj // the call presenting it (default confirmArgs)
		want   warrant.Verdict
		reason string
	}{
		{"rejected", audit.Approval{Verdict: audit.Rejected, Note: "not on a Friday"}, nil, warrant.RequireConfirmation, ReasonApprovalRejected},
		{"expired", audit.Approval{Scope: &audit.Scope{PropositionID: "P-tentative", ActionKind: "deploy"}, Until: testNow.Add(-time.Second)}, nil,
			warrant.RequireConfirmation, ReasonApprovalExpired},
		{"expired at the instant", audit.Approval{Once: true, Until: testNow}, nil, warrant.RequireConfirmation, ReasonApprovalExpired},
		{"wrong proposition: scope", audit.Approval{Scope: &audit.Scope{PropositionID: "P-tentative", ActionKind: "deploy"}, Until: later}, onConflict,
			warrant.RequireConfirmation, ReasonApprovalWrongProposition},
		{"wrong proposition: once", audit.Approval{Once: true}, onConflict, warrant.RequireConfirmation, ReasonApprovalWrongProposition},
		{"out of scope: kind", audit.Approval{Scope: &audit.Scope{PropositionID: "P-tentative", ActionKind: "deploy"}, Until: later},
			obj{"proposition_id": "P-tentative", "action": mergeObj(action(warrant.RiskMedium, true), obj{"kind": "restart"})},
			warrant.RequireConfirmation, ReasonApprovalOutOfScope},
		{"wrong action: action_id", audit.Approval{Once: true},
			obj{"proposition_id": "P-tentative", "action": mergeObj(action(warrant.RiskMedium, true), obj{"action_id": "act-2"})},
			warrant.RequireConfirmation, ReasonApprovalWrongAction},
		{"wrong action: kind", audit.Approval{Once: true},
			obj{"proposition_id": "P-tentative", "action": mergeObj(action(warrant.RiskMedium, true), obj{"kind": "restart"})},
			warrant.RequireConfirmation, ReasonApprovalWrongAction},
		{"deny stands", audit.Approval{Scope: &audit.Scope{PropositionID: "P-tentative", ActionKind: "deploy"}, Until: later},
			obj{"proposition_id": "P-tentative", "action": action(warrant.RiskHigh, true)}, warrant.Deny, ReasonApprovalCannotLift},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.ap.DecisionID = decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
			ap := approve(t, ml, tc.ap)
			args := tc.args
			if args == nil {
				args = confirmArgs()
			}
			out := mustOK(t, call(t, c, "may_act", mergeObj(args, obj{"approval_id": ap})))
			dec, why, _ := approvalOf(t, out)
			if out["decision"] != string(tc.want) || dec != string(tc.want) || !strings.HasPrefix(why, tc.reason+":") {
				t.Fatalf("want %s with %s, got %v / %s", tc.want, tc.reason, out["decision"], why)
			}
			if _, used := ml.UsedBy(ap); used {
				t.Error("an approval that did not lift the decision was consumed")
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		out := mustOK(t, call(t, c, "may_act", mergeObj(confirmArgs(), obj{"approval_id": "no-such-approval"})))
		if _, why, _ := approvalOf(t, out); out["decision"] != string(warrant.RequireConfirmation) || !strings.HasPrefix(why, ReasonApprovalUnknown+":") {
			t.Fatalf("unknown approval: %v", out)
		}
	})
	t.Run("proposition since become DENY", func(t *testing.T) {
		asked := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
		ap := approve(t, ml, audit.Approval{DecisionID: asked, Once: true})
		// The assertion is withdrawn: nothing asserts or supports it any
		// more, so it is UNACCEPTED, which is DENY at any risk.
		withdrawn := obj{"proposition_id": "P-tentative", "view_id": "v-tentative-2"}
		dv, err := warrant.DecodeView(mustJSONText(t, withdrawn))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(context.Background(), dv); err != nil {
			t.Fatal(err)
		}
		args := obj{"proposition_id": "P-tentative", "action": action(warrant.RiskMedium, true), "approval_id": ap}
		out := mustOK(t, call(t, c, "may_act", args))
		if _, why, _ := approvalOf(t, out); out["decision"] != string(warrant.Deny) || !strings.HasPrefix(why, ReasonApprovalCannotLift+":") {
			t.Fatalf("an approval lifted a proposition that became DENY: %v", out)
		}
		if _, used := ml.UsedBy(ap); used {
			t.Error("the approval was consumed by a DENY")
		}
	})
}

// A scoped approval covers other actions inside its scope, any number of
// times until it expires; one the gate does not need is left unused.
func TestApprovalScopeAndNotNeeded(t *testing.T) {
	srv, ml, _ := loggedServer(t)
	c := dialInProcess(t, srv)
	asked := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
	ap := approve(t, ml, audit.Approval{DecisionID: asked, Scope: &audit.Scope{PropositionID: "P-tentative", ActionKind: "deploy"},
		Until: testNow.Add(2 * time.Hour)})
	for _, id := range []string{"act-7", "act-8"} {
		args := obj{"proposition_id": "P-tentative", "action": mergeObj(action(warrant.RiskMedium, true), obj{"action_id": id}), "approval_id": ap}
		out := mustOK(t, call(t, c, "may_act", args))
		if _, why, _ := approvalOf(t, out); out["decision"] != string(warrant.MayActDecision) || !strings.Contains(why, "within its scope") {
			t.Fatalf("%s: scoped approval: %v", id, out)
		}
	}
	asked = decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
	once := approve(t, ml, audit.Approval{DecisionID: asked, Once: true})
	out := mustOK(t, call(t, c, "may_act", obj{"proposition_id": "P-tentative", "action": action(warrant.RiskLow, true), "approval_id": once}))
	if _, why, _ := approvalOf(t, out); out["decision"] != string(warrant.MayActDecision) || !strings.HasPrefix(why, ReasonApprovalNotNeeded+":") {
		t.Fatalf("not needed: %v", out)
	}
	if _, used := ml.UsedBy(once); used {
		t.Error("an approval the gate did not need was consumed")
	}
}

// Without a decision log, approval_id and idempotency_key are refused with
// their codes, answers carry no decision_id and decision_get does not exist.
func TestNoDecisionLog(t *testing.T) {
	srv, _ := newTestServer(t)
	c := dialInProcess(t, srv)
	msg := mustRefuse(t, call(t, c, "may_act", mergeObj(confirmArgs(), obj{"approval_id": "a"})), CodeApprovalsDisabled)
	if !strings.Contains(msg, ReasonApprovalsDisabled) {
		t.Errorf("message should name %s: %s", ReasonApprovalsDisabled, msg)
	}
	mustRefuse(t, call(t, c, "may_act", mergeObj(confirmArgs(), obj{"idempotency_key": "k"})), CodeNoDecisionLog)
	if out := mustOK(t, call(t, c, "may_act", confirmArgs())); out["decision_id"] != nil {
		t.Errorf("a decision_id without a log: %v", out)
	}
	if tools := toolNames(t, c); tools["decision_get"] {
		t.Error("decision_get without a log")
	}
}

func toolNames(t testing.TB, c *client.Client) map[string]bool {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, tl := range res.Tools {
		out[tl.Name] = true
	}
	return out
}

// What a record holds: the caller, the view judged with its canonical
// hash, the action, the risk policy and the layers, with the warrant as
// the warrant layer's detail.
func TestDecisionRecordContents(t *testing.T) {
	srv, ml, st := loggedServer(t)
	c := dialStdio(t, srv, true)
	out := mustOK(t, call(t, c, "may_act", confirmArgs()))
	d, err := ml.Decision(context.Background(), decisionID(t, out))
	if err != nil {
		t.Fatal(err)
	}
	latest, _ := st.Latest(context.Background(), "P-tentative")
	sum := sha256.Sum256(warrant.Canonical(latest))
	want := audit.Caller{ClientName: "ewp-test", ClientVersion: "0", Transport: "stdio", Role: "ingest", Credential: "none"}
	switch {
	case d.Caller != want:
		t.Errorf("caller %+v, want %+v", d.Caller, want)
	case d.Tool != audit.ToolMayAct || d.Outcome != audit.OutcomeRequireConfirmation || !d.Time.Equal(testNow):
		t.Errorf("tool/outcome/time: %+v", d)
	case d.PropositionID != "P-tentative" || d.ViewID != "v-tentative" || d.ViewHash != hex.EncodeToString(sum[:]):
		t.Errorf("view: %s %s %s", d.PropositionID, d.ViewID, d.ViewHash)
	case d.ActionID != "act-1" || d.ActionKind != "deploy" || d.Risk != "medium" || d.Reversible == nil || !*d.Reversible:
		t.Errorf("action: %+v", d)
	case d.RiskPolicy.(map[string]any)["policy_id"] != "action-v0.1":
		t.Errorf("risk policy: %v", d.RiskPolicy)
	case len(d.Layers) != 1 || d.Layers[0].Decision != audit.VerdictRequireConfirmation || len(d.Layers[0].Reasons) == 0:
		t.Errorf("layers: %+v", d.Layers)
	case d.Layers[0].Detail.(map[string]any)["acceptance"] == nil:
		t.Errorf("the warrant layer's detail should be the warrant judged: %v", d.Layers[0].Detail)
	}
	// A new snapshot gets its own hash (the server caches hashes per view).
	next, err := warrant.DecodeView(mustJSONText(t, view("P-tentative", "v-tentative-2", obj{"degraded": true})))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	d2, err := ml.Decision(context.Background(), decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs()))))
	sum2 := sha256.Sum256(warrant.Canonical(next))
	if err != nil || d2.ViewID != "v-tentative-2" || d2.ViewHash != hex.EncodeToString(sum2[:]) || d2.ViewHash == d.ViewHash {
		t.Errorf("after the view moved on: %s %s (%v)", d2.ViewID, d2.ViewHash, err)
	}
}

// The HTTP caller: transport, peer and the credential that gave the role.
func TestDecisionCallerOverHTTP(t *testing.T) {
	srv, ml, _ := loggedServer(t)
	for _, ingest := range []bool{false, true} {
		c := dialHTTP(t, srv, ingest)
		d, err := ml.Decision(context.Background(), decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs()))))
		if err != nil {
			t.Fatal(err)
		}
		role, cred := "evaluate", "none"
		if ingest {
			role, cred = "ingest", "ingest-token"
		}
		if d.Caller.Transport != "http" || !strings.HasPrefix(d.Caller.RemoteAddr, "127.0.0.1:") || d.Caller.Role != role || d.Caller.Credential != cred {
			t.Errorf("ingest=%v: caller %+v", ingest, d.Caller)
		}
	}
}

// Refusals are on record with their code, so attempts are visible.
func TestRefusalsRecorded(t *testing.T) {
	srv, ml, _ := loggedServer(t)
	c := dialInProcess(t, srv)
	refusals := []struct {
		args obj
		code string
	}{
		{obj{"proposition_id": "P-tentative", "action": action("medium", true), "evaluatedAt": testT}, CodeInvalidArgument},
		{mergeObj(confirmArgs(), obj{"risk_policy": obj{"policy_id": "lax"}}), warrant.CodeClientRiskPolicy},
		{mergeObj(confirmArgs(), obj{"view_id": "v-old"}), warrant.CodeStaleViewForAction},
		{obj{"proposition_id": "P-tentative", "action": obj{"action_id": "a"}}, warrant.CodeInvalidAction},
		{mergeObj(confirmArgs(), obj{"view": obj{}}), CodeInvalidArgument},
	}
	var ids []string
	for _, r := range refusals {
		o := call(t, c, "may_act", r.args)
		mustRefuse(t, o, r.code)
		ids = append(ids, o.decisionID)
	}
	got, err := ml.List(context.Background(), audit.Filter{Outcome: audit.OutcomeRefused})
	if err != nil || len(got) != len(refusals) {
		t.Fatalf("%d refusals on record, want %d (%v)", len(got), len(refusals), err)
	}
	for i, d := range got {
		if d.Code != refusals[i].code || d.Message == "" || d.Tool != audit.ToolMayAct || d.ID == "" {
			t.Errorf("refusal %d: %+v", i, d)
		}
		// The contract: every recorded call's answer carries its decision_id.
		if ids[i] != d.ID {
			t.Errorf("refusal %d answered decision_id %q, recorded as %q", i, ids[i], d.ID)
		}
	}
	if got[2].PropositionID != "P-tentative" || got[2].ActionID != "act-1" {
		t.Errorf("a refusal after decoding should show what was asked: %+v", got[2])
	}
}

// failingLog fails every Record.
type failingLog struct{ audit.Log }

func (failingLog) Record(context.Context, *audit.Decision) error { return errors.New("disk full") }

// A decision that cannot be recorded is not answered.
func TestUnrecordedIsNotAnswered(t *testing.T) {
	srv, _ := newTestServer(t, WithDecisionLog(testLog(failingLog{memlog.New(nil)})))
	c := dialInProcess(t, srv)
	msg := mustRefuse(t, call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": action("low", true)}), CodeInternal)
	if !strings.Contains(msg, "disk full") || !strings.Contains(msg, "not answered") {
		t.Errorf("message: %s", msg)
	}
	mustRefuse(t, call(t, c, "may_act", obj{"proposition_id": "P-verified"}), CodeInternal)
}

// idempotency_key: a retry gets the recorded decision back, once on
// record; a key reused for another call is refused; a refusal does not
// bind the key.
func TestIdempotencyKey(t *testing.T) {
	// The real clock, whose fractions of a second a replay must keep.
	srv, ml, _ := loggedServer(t, WithClock(time.Now))
	c := dialInProcess(t, srv)
	args := mergeObj(confirmArgs(), obj{"idempotency_key": "k-1"})
	first := mustOK(t, call(t, c, "may_act", args))
	retry := mustOK(t, call(t, c, "may_act", args))
	if retry["decision_id"] != first["decision_id"] || retry["replayed"] != true || first["replayed"] != nil {
		t.Fatalf("retry %v, first %v", retry, first)
	}
	delete(retry, "replayed")
	if got, want := string(mustJSONText(t, retry)), string(mustJSONText(t, first)); got != want {
		t.Errorf("the replay differs from the answer:\n%s\n%s", got, want)
	}
	all, _ := ml.List(context.Background(), audit.Filter{})
	if len(all) != 1 {
		t.Errorf("%d decisions on record after a retry, want 1", len(all))
	}
	other := mergeObj(args, obj{"action": action(warrant.RiskLow, true)})
	mustRefuse(t, call(t, c, "may_act", other), CodeIdempotencyKeyReused)

	stale := mergeObj(confirmArgs(), obj{"idempotency_key": "k-2", "view_id": "v-old"})
	mustRefuse(t, call(t, c, "may_act", stale), warrant.CodeStaleViewForAction)
	delete(stale, "view_id")
	if out := mustOK(t, call(t, c, "may_act", stale)); out["replayed"] != nil || out["decision"] != string(warrant.RequireConfirmation) {
		t.Errorf("the corrected retry after a refusal should be decided: %v", out)
	}
}

// A retry of a call whose approval lifted it returns that MAY_ACT without
// using the approval again.
func TestIdempotentRetryOfApprovedCall(t *testing.T) {
	srv, ml, _ := loggedServer(t)
	c := dialInProcess(t, srv)
	asked := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
	ap := approve(t, ml, audit.Approval{DecisionID: asked, Once: true})
	args := mergeObj(confirmArgs(), obj{"approval_id": ap, "idempotency_key": "deploy-42"})
	first := mustOK(t, call(t, c, "may_act", args))
	retry := mustOK(t, call(t, c, "may_act", args))
	if first["decision"] != string(warrant.MayActDecision) || retry["decision"] != string(warrant.MayActDecision) || retry["decision_id"] != first["decision_id"] {
		t.Fatalf("first %v retry %v", first, retry)
	}
	if _, why, _ := approvalOf(t, retry); !strings.HasPrefix(why, ReasonApproved+":") {
		t.Errorf("the replay should show the approval layer as recorded: %s", why)
	}
}

// decision_get of an unknown id, and the resource.
func TestDecisionGetAndResource(t *testing.T) {
	srv, _, _ := loggedServer(t)
	c := dialStdio(t, srv, false)
	mustRefuse(t, call(t, c, "decision_get", obj{"decision_id": "nope"}), CodeUnknownDecision)
	id := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
	req := mcpgo.ReadResourceRequest{}
	req.Params.URI = "ewp://decision/" + id
	res, err := c.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Contents[0].(mcpgo.TextResourceContents).Text
	if !strings.Contains(text, `"decision_id":"`+id+`"`) || !strings.Contains(text, `"approvals":[]`) {
		t.Errorf("resource: %s", text)
	}
	req.Params.URI = "ewp://decision/nope"
	_, err = c.ReadResource(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), CodeUnknownDecision) {
		t.Errorf("unknown decision resource: %v", err)
	}
}

// No MCP tool creates an approval, whatever the role: an agent holding the
// ingest role has no approve tool, no write tool takes approval fields,
// and an approval_id it makes up is unknown.
func TestAgentCannotApprove(t *testing.T) {
	srv, ml, _ := loggedServer(t, fuzzGuard(t))
	c := dialHTTP(t, srv, true)
	res, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		lower := strings.ToLower(tl.Name)
		if strings.Contains(lower, "approv") || strings.Contains(lower, "reject") {
			t.Errorf("tool %s approves", tl.Name)
		}
		schemaText := string(tl.RawInputSchema)
		if write := tl.Annotations.ReadOnlyHint != nil && !*tl.Annotations.ReadOnlyHint; write &&
			(strings.Contains(schemaText, "approv") || strings.Contains(schemaText, "verdict")) {
			t.Errorf("write tool %s takes approval fields: %s", tl.Name, schemaText)
		}
	}
	asked := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
	out := mustOK(t, call(t, c, "may_act", mergeObj(confirmArgs(), obj{"approval_id": asked})))
	if _, why, _ := approvalOf(t, out); out["decision"] != string(warrant.RequireConfirmation) || !strings.HasPrefix(why, ReasonApprovalUnknown+":") {
		t.Errorf("a decision id passed as an approval: %v", out)
	}
	trail, err := ml.ApprovalsFor(context.Background(), asked)
	if err != nil {
		t.Fatalf("reading the approvals of decision %s: %v", asked, err)
	}
	if len(trail) != 0 {
		t.Errorf("approvals appeared without the operator: %v", trail)
	}
}

// check_grounding calls are decisions too; may_act with concepts records
// the graph version, the policies and the arguments by hash.
func TestGroundingRecorded(t *testing.T) {
	ml := memlog.New(nil)
	srv := demoServer(t, WithDecisionLog(DecisionLog{Log: ml, PolicySetHash: "abc123", OperatorKeys: alice.Keys}))
	c := dialInProcess(t, srv)
	out := mustOK(t, call(t, c, "check_grounding", obj{"concepts": []any{"delete", "file"}}))
	d, err := ml.Decision(context.Background(), decisionID(t, out))
	if err != nil {
		t.Fatal(err)
	}
	if d.Tool != audit.ToolCheckGrounding || d.Outcome != audit.OutcomeAnswered || d.GraphVersion == 0 ||
		strings.Join(d.Concepts, ",") != "delete,file" ||
		len(d.Layers) != 1 || d.Layers[0].Decision != "GROUNDED" {
		t.Errorf("check_grounding record: %+v", d)
	}
	mustRefuse(t, call(t, c, "check_grounding", obj{"concepts": "delete"}), CodeInvalidArgument)

	hashes := map[string]bool{}
	for _, argsObj := range []obj{{"path": "/tmp/a", "force": true}, {"force": true, "path": "/tmp/a"}} {
		act := guardAct([]any{"delete", "file"}, obj{"tool_name": "rm", "arguments": argsObj, "cardinality": "single"})
		out := mustOK(t, call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": act}))
		d, err := ml.Decision(context.Background(), decisionID(t, out))
		if err != nil {
			t.Fatal(err)
		}
		if d.GraphVersion == 0 || d.PolicySetHash != "abc123" || len(d.PolicyIDs) == 0 || d.ToolName != "rm" ||
			strings.Join(d.Concepts, ",") != "delete,file" || len(d.Layers) != 3 {
			t.Errorf("guarded may_act record: %+v", d)
		}
		hashes[d.ArgumentsHash] = true
	}
	if len(hashes) != 1 {
		t.Errorf("the arguments hash depends on key order: %v", hashes)
	}
	refused, _ := ml.List(context.Background(), audit.Filter{Outcome: audit.OutcomeRefused})
	if len(refused) != 1 || refused[0].Tool != audit.ToolCheckGrounding {
		t.Errorf("check_grounding refusal on record: %+v", refused)
	}
}

// Idempotency keys are scoped by the caller's credential: the same key
// from a caller with the ingest token and one without names two calls.
func TestIdempotencyKeyPerCredential(t *testing.T) {
	srv, ml, _ := loggedServer(t)
	args := mergeObj(confirmArgs(), obj{"idempotency_key": "k"})
	anon := mustOK(t, call(t, dialHTTP(t, srv, false), "may_act", args))
	token := mustOK(t, call(t, dialHTTP(t, srv, true), "may_act", args))
	if anon["decision_id"] == token["decision_id"] || token["replayed"] != nil {
		t.Fatalf("one key across credentials: %v / %v", anon["decision_id"], token["decision_id"])
	}
	if all, _ := ml.List(context.Background(), audit.Filter{}); len(all) != 2 {
		t.Errorf("%d decisions, want 2", len(all))
	}
}

// Issue 19 item 3: a scope never covers more risk, less reversibility or
// a laxer risk policy than the decision it answered. Under the ingest
// role's relaxed policy, a scope given for a low-risk deploy on P-degraded
// does not lift a high-risk one; within the bounds it still lifts.
func TestScopeNeverWidensTheAnsweredAction(t *testing.T) {
	srv, ml, _ := loggedServer(t)
	c := dialStdio(t, srv, true)
	low := obj{"proposition_id": "P-degraded", "action": action(warrant.RiskLow, true)}
	asked := mustOK(t, call(t, c, "may_act", low))
	if asked["decision"] != string(warrant.RequireConfirmation) {
		t.Fatalf("want REQUIRE_CONFIRMATION for the low-risk deploy, got %v", asked)
	}
	ap := approve(t, ml, audit.Approval{DecisionID: decisionID(t, asked), Scope: &audit.Scope{PropositionID: "P-degraded", ActionKind: "deploy"},
		Until: testNow.Add(time.Hour)})
	relaxed := obj{"policy_id": "ingest-relaxed", "high_requires_accepted": false, "high_requires_no_open_conflict": false}
	cases := []struct {
		name   string
		args   obj
		want   warrant.Verdict
		reason string
	}{
		{"high risk under the relaxed policy", obj{"proposition_id": "P-degraded", "action": action(warrant.RiskHigh, true), "risk_policy": relaxed},
			warrant.RequireConfirmation, ReasonApprovalOutOfScope},
		{"low risk, irreversible", obj{"proposition_id": "P-degraded", "action": action(warrant.RiskLow, false)}, warrant.RequireConfirmation, ReasonApprovalOutOfScope},
		{"low risk under the relaxed policy", mergeObj(low, obj{"risk_policy": relaxed}), warrant.RequireConfirmation, ReasonApprovalOutOfScope},
		{"another low-risk deploy", obj{"proposition_id": "P-degraded", "action": mergeObj(action(warrant.RiskLow, true), obj{"action_id": "act-9"})},
			warrant.MayActDecision, ReasonApproved},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := mustOK(t, call(t, c, "may_act", mergeObj(tc.args, obj{"approval_id": ap})))
			dec, why, _ := approvalOf(t, out)
			if out["decision"] != string(tc.want) || dec != string(tc.want) || !strings.HasPrefix(why, tc.reason+":") {
				t.Fatalf("want %s with %s, got %v / %s", tc.want, tc.reason, out["decision"], why)
			}
		})
	}
}

// Issue 19 item 3: a once approval binds the risk policy the call was
// judged under, and the decision keeps it with the action.
func TestOnceApprovalBindsTheRiskPolicy(t *testing.T) {
	srv, ml, _ := loggedServer(t)
	c := dialStdio(t, srv, true)
	policy := func(conflict bool) obj {
		return obj{"policy_id": "ingest-relaxed", "high_requires_accepted": false, "high_requires_no_open_conflict": conflict}
	}
	args := obj{"proposition_id": "P-degraded", "action": action(warrant.RiskHigh, true), "risk_policy": policy(true)}
	asked := mustOK(t, call(t, c, "may_act", args))
	if asked["decision"] != string(warrant.RequireConfirmation) {
		t.Fatalf("want REQUIRE_CONFIRMATION, got %v", asked)
	}
	ap := approve(t, ml, audit.Approval{DecisionID: decisionID(t, asked), Once: true})
	out := mustOK(t, call(t, c, "may_act", mergeObj(args, obj{"approval_id": ap, "risk_policy": policy(false)})))
	if _, why, _ := approvalOf(t, out); out["decision"] != string(warrant.RequireConfirmation) || !strings.Contains(why, "risk_policy") {
		t.Fatalf("a once approval lifted a call under another risk policy: %v", out)
	}
	out = mustOK(t, call(t, c, "may_act", mergeObj(args, obj{"approval_id": ap})))
	if out["decision"] != string(warrant.MayActDecision) {
		t.Fatalf("the same call under the same policy: %v", out)
	}
}

// Issue 19 item 3: the gate honours an approval for at most its maximum
// lifetime after creation, whatever until the log row claims.
func TestGateCapsTheApprovalLifetime(t *testing.T) {
	ml := memlog.New(func() time.Time { return testNow.Add(-2 * time.Hour) })
	srv, _ := newTestServer(t, WithDecisionLog(DecisionLog{Log: ml, OperatorKeys: alice.Keys, MaxApprovalLifetime: time.Hour}))
	c := dialInProcess(t, srv)
	for _, until := range []time.Time{{}, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)} {
		asked := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
		ap := approve(t, ml, audit.Approval{DecisionID: asked, Once: true, Until: until, CreatedAt: testNow.Add(-2 * time.Hour)})
		out := mustOK(t, call(t, c, "may_act", mergeObj(confirmArgs(), obj{"approval_id": ap})))
		if _, why, detail := approvalOf(t, out); out["decision"] != string(warrant.RequireConfirmation) || !strings.HasPrefix(why, ReasonApprovalExpired+":") ||
			detail["until"] != testNow.Add(-time.Hour).Format(timeLayout) {
			t.Fatalf("until %s: an approval older than the maximum lifetime lifted the call: %v / %s / %v", until, out["decision"], why, detail)
		}
	}
}

// Issue 19 item 8: a replay is bounded by the replay window and by the
// approval that lifted it, and is held to the evaluated_at skew check.
func TestReplayOutlivesNeitherWindowNorApproval(t *testing.T) {
	var mu sync.Mutex
	now := testNow
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	set := func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }
	ml := memlog.New(clock)
	srv, _ := newTestServer(t, WithClock(clock), WithDecisionLog(DecisionLog{Log: ml, OperatorKeys: alice.Keys, ReplayWindow: time.Hour}))
	c := dialInProcess(t, srv)

	t.Run("a scope expired 4 s ago", func(t *testing.T) {
		set(testNow)
		asked := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
		ap := approve(t, ml, audit.Approval{DecisionID: asked, Scope: &audit.Scope{PropositionID: "P-tentative", ActionKind: "deploy"},
			Until: testNow.Add(time.Minute)})
		args := mergeObj(confirmArgs(), obj{"approval_id": ap, "idempotency_key": "scope-1"})
		if out := mustOK(t, call(t, c, "may_act", args)); out["decision"] != string(warrant.MayActDecision) {
			t.Fatalf("the scope did not lift the call: %v", out)
		}
		set(testNow.Add(time.Minute - time.Second))
		if out := mustOK(t, call(t, c, "may_act", args)); out["replayed"] != true || out["decision"] != string(warrant.MayActDecision) {
			t.Fatalf("a replay while the scope holds: %v", out)
		}
		set(testNow.Add(time.Minute + 4*time.Second))
		msg := mustRefuse(t, call(t, c, "may_act", args), CodeIdempotencyKeyExpired)
		if !strings.Contains(msg, "expired at") || !strings.Contains(msg, "new key") {
			t.Errorf("message: %s", msg)
		}
	})
	t.Run("a once approval past the window", func(t *testing.T) {
		set(testNow)
		asked := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
		ap := approve(t, ml, audit.Approval{DecisionID: asked, Once: true})
		args := mergeObj(confirmArgs(), obj{"approval_id": ap, "idempotency_key": "once-1"})
		mustOK(t, call(t, c, "may_act", args))
		set(testNow.Add(time.Hour))
		if out := mustOK(t, call(t, c, "may_act", args)); out["replayed"] != true {
			t.Fatalf("a replay at the end of the window: %v", out)
		}
		set(testNow.Add(time.Hour + time.Second))
		if msg := mustRefuse(t, call(t, c, "may_act", args), CodeIdempotencyKeyExpired); !strings.Contains(msg, "replay window 1h0m0s") {
			t.Errorf("message: %s", msg)
		}
	})
	t.Run("skew", func(t *testing.T) {
		set(testNow)
		args := mergeObj(confirmArgs(), obj{"idempotency_key": "skew-1"})
		mustOK(t, call(t, c, "may_act", args))
		skewed := mergeObj(args, obj{"evaluated_at": testNow.Add(time.Hour).Format(timeLayout)})
		mustRefuse(t, call(t, c, "may_act", skewed), warrant.CodeEvaluatedAtSkew)
	})
}
