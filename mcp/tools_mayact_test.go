package mcp

import (
	"context"
	"encoding/json"
	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/ewp-go/ewp/warrant"
)

func action(risk string, reversible bool) obj {
	return obj{"action_id": "act-1", "kind": "deploy", "risk": risk, "reversible": reversible}
}

func TestMayActDecisions(t *testing.T) {
	cases := []struct {
		pid, risk  string
		reversible bool
		want       warrant.Verdict
	}{
		{"P-verified", warrant.RiskHigh, false, warrant.MayActDecision},
		{"P-tentative", warrant.RiskLow, true, warrant.MayActDecision},
		{"P-tentative", warrant.RiskMedium, true, warrant.RequireConfirmation},
		{"P-tentative", warrant.RiskHigh, true, warrant.Deny},
		{"P-conflict", warrant.RiskLow, true, warrant.RequireConfirmation},
		{"P-degraded", warrant.RiskLow, true, warrant.RequireConfirmation},
		{"P-superseded", warrant.RiskHigh, true, warrant.Deny},
		{"P-empty", warrant.RiskLow, true, warrant.Deny},
	}
	eachTransport(t, false, func(t *testing.T, c *client.Client, _ *fakeStore) {
		for _, tc := range cases {
			out := mustOK(t, call(t, c, "may_act", obj{"proposition_id": tc.pid, "action": action(tc.risk, tc.reversible)}))
			layers := out["layers"].([]any)
			first := layers[0].(obj)
			if out["decision"] != string(tc.want) || len(layers) != 1 || first["layer"] != "warrant" || first["decision"] != string(tc.want) {
				t.Errorf("%s %s: %v", tc.pid, tc.risk, out)
			}
			if len(first["reasons"].([]any)) == 0 {
				t.Errorf("%s: a decision without reasons", tc.pid)
			}
			if out["evaluated_at"] != testNow.Format(timeLayout) || out["view_id"] == "" {
				t.Errorf("%s: not decided at the server clock on the latest view: %v", tc.pid, out)
			}
			if rp := out["risk_policy"].(obj); rp["policy_id"] != "action-v0.1" {
				t.Errorf("default risk policy: %v", rp)
			}
		}
	})
}

func TestMayActEvaluatedAtSkew(t *testing.T) {
	srv, _ := newTestServer(t)
	c := dialInProcess(t, srv)
	at := func(d time.Duration) string { return testNow.Add(d).Format(time.RFC3339) }
	for _, ok := range []string{at(0), at(300 * time.Second), at(-300 * time.Second), "2026-09-21T22:59:00+02:00", "2026-09-21 21:04"} {
		out := mustOK(t, call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": action("low", true), "evaluated_at": ok}))
		if out["evaluated_at"] != testNow.Format(timeLayout) {
			t.Errorf("evaluated_at %s moved the gate's clock: %v", ok, out["evaluated_at"])
		}
	}
	for _, bad := range []string{at(301 * time.Second), at(-301 * time.Second), "2027-01-01", "2026-09-21T21:00:00+02:00", "now"} {
		mustRefuse(t, call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": action("low", true), "evaluated_at": bad}),
			warrant.CodeEvaluatedAtSkew)
	}
}

func TestMayActLatestViewOnly(t *testing.T) {
	eachTransport(t, true, func(t *testing.T, c *client.Client, _ *fakeStore) {
		args := obj{"proposition_id": "P-tentative", "view_id": "v-tentative", "action": action("low", true)}
		mustOK(t, call(t, c, "may_act", args))
		rec := mustOK(t, call(t, c, "evidence_record", obj{"proposition_id": "P-tentative", "evidence_id": "e-new",
			"polarity": "opposes", "content": "it is Linux", "source": obj{"content_hash": "h", "observed_at": "2026-09-20"}}))
		msg := mustRefuse(t, call(t, c, "may_act", args), warrant.CodeStaleViewForAction)
		if !strings.Contains(msg, rec["view_id"].(string)) {
			t.Errorf("message should name the latest view: %s", msg)
		}
		args["view_id"] = rec["view_id"]
		out := mustOK(t, call(t, c, "may_act", args))
		if out["view_id"] != rec["view_id"] {
			t.Fatalf("not judged on the new latest view: %v", out)
		}
		args["view_id"] = "v-never-stored"
		mustRefuse(t, call(t, c, "may_act", args), warrant.CodeStaleViewForAction)
	})
}

func TestMayActRiskPolicyNeedsIngestRole(t *testing.T) {
	lenient := obj{"high_requires_accepted": false}
	args := obj{"proposition_id": "P-tentative", "action": action("high", true), "risk_policy": lenient}
	eachTransport(t, false, func(t *testing.T, c *client.Client, _ *fakeStore) {
		mustRefuse(t, call(t, c, "may_act", args), warrant.CodeClientRiskPolicy)
		// Even a malformed policy is refused for the role first.
		mustRefuse(t, call(t, c, "may_act", obj{"proposition_id": "P-tentative", "action": "x", "risk_policy": "x"}), warrant.CodeClientRiskPolicy)
	})
	eachTransport(t, true, func(t *testing.T, c *client.Client, _ *fakeStore) {
		out := mustOK(t, call(t, c, "may_act", args))
		if out["decision"] != string(warrant.MayActDecision) || out["risk_policy"].(obj)["high_requires_accepted"] != false {
			t.Fatalf("operator policy not applied: %v", out)
		}
		def := mustOK(t, call(t, c, "may_act", obj{"proposition_id": "P-tentative", "action": action("high", true)}))
		if def["decision"] != string(warrant.Deny) {
			t.Fatalf("default policy: %v", def)
		}
		mustRefuse(t, call(t, c, "may_act", obj{"proposition_id": "P-tentative", "action": action("high", true),
			"risk_policy": obj{"high_requires_accepted": "no"}}), CodeInvalidArgument)
		mustRefuse(t, call(t, c, "may_act", obj{"proposition_id": "P-tentative", "action": action("high", true),
			"risk_policy": obj{"laxity": 1}}), CodeInvalidArgument)
	})
}

func TestMayActRefusals(t *testing.T) {
	srv, _ := newTestServer(t)
	c := dialInProcess(t, srv)
	ok := action("low", true)
	cases := []struct {
		args obj
		code string
	}{
		{obj{"proposition_id": "P-verified", "action": ok, "view": seedViews()[0]}, CodeInvalidArgument},
		{obj{"proposition_id": "P-verified", "action": ok, "warrant": obj{"acceptance": "ACCEPTED"}}, CodeInvalidArgument},
		{obj{"action": ok}, CodeInvalidArgument},
		{obj{"proposition_id": "P-nope", "action": ok}, warrant.CodeMissingView},
		{obj{"proposition_id": "P-verified"}, warrant.CodeInvalidAction},
		{obj{"proposition_id": "P-verified", "action": "deploy"}, warrant.CodeInvalidAction},
		{obj{"proposition_id": "P-verified", "action": obj{"action_id": "a", "kind": "k", "risk": "extreme", "reversible": true}}, warrant.CodeInvalidAction},
		{obj{"proposition_id": "P-verified", "action": obj{"action_id": "a", "kind": "k", "risk": "low", "reversible": "yes"}}, warrant.CodeInvalidAction},
		{obj{"proposition_id": "P-verified", "action": obj{"action_id": "a", "kind": "k", "risk": "low"}}, warrant.CodeInvalidAction},
		{obj{"proposition_id": "P-verified", "action": obj{"kind": "k", "risk": "low", "reversible": true}}, warrant.CodeInvalidAction},
		// No grounding layer here: an action naming concepts is refused, not judged on less than it says.
		{obj{"proposition_id": "P-verified", "action": obj{"action_id": "a", "kind": "k", "risk": "low", "reversible": true, "concepts": []any{"file"}}}, warrant.CodeInvalidAction},
	}
	for _, tc := range cases {
		mustRefuse(t, call(t, c, "may_act", tc.args), tc.code)
	}
}

// denyLayer stands in for the guard: it claims "concepts" and denies
// whenever the action names "protected".
type denyLayer struct{ seen gate.Input }

func (l *denyLayer) Name() string         { return "grounding" }
func (l *denyLayer) ActionKeys() []string { return []string{"concepts"} }
func (l *denyLayer) Decide(_ context.Context, in gate.Input) (gate.LayerDecision, error) {
	l.seen = in
	var concepts []string
	_ = json.Unmarshal(in.ActionFields["concepts"], &concepts)
	for _, c := range concepts {
		if c == "protected" {
			return gate.LayerDecision{Decision: audit.VerdictDeny, Reasons: []string{"protected is not grounded"}}, nil
		}
	}
	return gate.LayerDecision{Decision: audit.VerdictMayAct}, nil
}

func TestMayActComposesLayers(t *testing.T) {
	layer := &denyLayer{}
	srv, _ := newTestServer(t, WithGateLayer(layer))
	c := dialInProcess(t, srv)
	act := action("low", true)
	act["concepts"] = []any{"file"}
	out := mustOK(t, call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": act}))
	if out["decision"] != string(warrant.MayActDecision) || len(out["layers"].([]any)) != 2 {
		t.Fatalf("%v", out)
	}
	if layer.seen.Warrant.Warrant.Acceptance != warrant.Accepted || layer.seen.PropositionID != "P-verified" {
		t.Fatalf("layer saw %+v", layer.seen)
	}
	act["concepts"] = []any{"protected"}
	out = mustOK(t, call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": act}))
	second := out["layers"].([]any)[1].(obj)
	if out["decision"] != string(warrant.Deny) || second["layer"] != "grounding" || second["decision"] != string(warrant.Deny) {
		t.Fatalf("a denying layer must win: %v", out)
	}
	// A layer can only restrict: the warrant layer's DENY stands.
	out = mustOK(t, call(t, c, "may_act", obj{"proposition_id": "P-empty", "action": action("low", true)}))
	if out["decision"] != string(warrant.Deny) {
		t.Fatalf("%v", out)
	}
}
