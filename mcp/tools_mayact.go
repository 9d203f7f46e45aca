package mcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

func (s *Server) mayActTool() toolSpec {
	in := schema{
		"properties": schema{
			"proposition_id": nonEmpty("The stored proposition the action relies on."),
			"action":         actionSchema(),
			"view_id":        nonEmpty("Optional: the snapshot you looked at. Refused unless it is still the latest, so you never act on evidence that has moved on."),
			"evaluated_at":   nonEmpty("Optional: the time you believe it is. Refused when more than 300 s from the server clock; the gate always decides at the server clock."),
			"risk_policy":    riskPolicySchema(),
		},
		"required": []string{"proposition_id", "action"},
	}
	t := readTool("may_act",
		"The live action gate: MAY_ACT, REQUIRE_CONFIRMATION or DENY for an action that relies on a stored "+
			"proposition, decided on its latest stored snapshot at the server clock. It never takes an inline "+
			"view or a WarrantView. Follow the decision: ask the user on REQUIRE_CONFIRMATION, do not act on DENY. "+
			rulesShort, in, mayActOutput(), s.mayAct)
	t.pre = refuseInlineEvidence
	return t
}

func mayActOutput() schema {
	layer := object("One layer's verdict.", schema{
		"layer":    str("warrant, then any guard layers."),
		"decision": enum("", warrant.MayActDecision, warrant.RequireConfirmation, warrant.Deny),
		"reasons":  idList("The rules that produced the decision."),
		"detail":   schema{"description": "Layer-specific detail."},
	}, "layer", "decision", "reasons")
	return object("The gate's decision.", schema{
		"decision":       enum("The most restrictive decision of all layers.", warrant.MayActDecision, warrant.RequireConfirmation, warrant.Deny),
		"layers":         array("Each layer's verdict, warrant first.", layer),
		"proposition_id": str(""),
		"view_id":        str("The latest snapshot, which was judged."),
		"evaluated_at":   str("The server clock at the decision."),
		"action":         actionSchema(),
		"warrant":        axesSchema(),
		"risk_policy":    riskPolicySchema(),
	}, "decision", "layers", "proposition_id", "view_id", "evaluated_at", "action", "warrant", "risk_policy")
}

// refuseInlineEvidence gives the specific reason an inline view or a
// caller's WarrantView is refused, before the generic unknown-argument
// check would.
func refuseInlineEvidence(_ context.Context, a args) error {
	for _, k := range []string{"view", "warrant", "warrant_view"} {
		if a.has(k) {
			return badArg(k, "may_act never takes an inline view or a WarrantView: it decides on the latest "+
				"stored snapshot of proposition_id; store evidence through the ingest pipeline first")
		}
	}
	return nil
}

// mayAct checks, in order: the caller's right to a risk policy, the
// arguments, the clock skew, that the proposition is stored, that a named
// view is the latest; then it asks every layer.
func (s *Server) mayAct(ctx context.Context, a args) (any, error) {
	policy, err := riskPolicy(ctx, a)
	if err != nil {
		return nil, err
	}
	pid, err := a.requiredID("", "proposition_id")
	if err != nil {
		return nil, err
	}
	action, fields, err := s.decodeAction(a)
	if err != nil {
		return nil, err
	}
	now := s.now()
	if err := checkSkew(a, now); err != nil {
		return nil, err
	}
	latest, err := s.latestForAction(ctx, a, pid)
	if err != nil {
		return nil, err
	}
	t := now.UTC().Format(timeLayout)
	w, err := warrant.Evaluate(latest, t)
	if err != nil {
		return nil, err
	}
	first, err := warrantDecision(w.Warrant, action, policy)
	if err != nil {
		return nil, err
	}
	in := GateInput{PropositionID: pid, Action: action, ActionFields: fields, Warrant: filled(w), Ingest: hasIngest(ctx)}
	layers, err := s.runLayers(ctx, in, first)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"decision": combine(layers), "layers": layers, "proposition_id": pid, "view_id": latest.ViewID,
		"evaluated_at": t, "action": action, "warrant": in.Warrant.Warrant, "risk_policy": policy,
	}, nil
}

// riskPolicy reads risk_policy, which only an ingest caller may send: an
// agent must not be able to relax the policy that gates it.
func riskPolicy(ctx context.Context, a args) (warrant.RiskPolicy, error) {
	p := warrant.DefaultRiskPolicy()
	if !a.has("risk_policy") {
		return p, nil
	}
	if !hasIngest(ctx) {
		return p, refuse(warrant.CodeClientRiskPolicy, "risk_policy",
			"only the operator's ingest role may set the action policy; omit risk_policy to use %s", p.PolicyID)
	}
	obj, _, err := a.object("", "risk_policy")
	if err != nil {
		return p, err
	}
	return decodeRiskPolicy(obj, p)
}

func decodeRiskPolicy(obj args, p warrant.RiskPolicy) (warrant.RiskPolicy, error) {
	if err := obj.only("risk_policy", []string{"policy_id", "version", "high_requires_accepted", "high_requires_no_open_conflict"}); err != nil {
		return p, err
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"policy_id", &p.PolicyID}, {"version", &p.Version}} {
		v, ok, err := obj.id("risk_policy", f.name)
		if err != nil {
			return p, err
		}
		if ok {
			*f.dst = v
		}
	}
	var err error
	if p.HighRequiresAccepted, err = obj.boolean("risk_policy", "high_requires_accepted", p.HighRequiresAccepted); err != nil {
		return p, err
	}
	p.HighRequiresNoOpenConflict, err = obj.boolean("risk_policy", "high_requires_no_open_conflict", p.HighRequiresNoOpenConflict)
	return p, err
}

// decodeAction reads the action. Every malformed field is
// EWP_REFUSE_INVALID_ACTION; reversible is never assumed.
func (s *Server) decodeAction(a args) (warrant.Action, map[string]json.RawMessage, error) {
	raw, ok := a["action"]
	if !ok {
		return warrant.Action{}, nil, refuse(warrant.CodeInvalidAction, "action",
			"is required: {action_id, kind, risk: low|medium|high, reversible: true|false}")
	}
	obj, err := decodeObject("action", raw)
	if err != nil {
		return warrant.Action{}, nil, asActionError(err)
	}
	act, err := actionFields(obj, s.layerKeys())
	if err != nil {
		return act, nil, asActionError(err)
	}
	return act, map[string]json.RawMessage(obj), warrant.ValidateAction(act)
}

func actionFields(obj args, keys []string) (warrant.Action, error) {
	var act warrant.Action
	if err := obj.only("action", keys); err != nil {
		return act, err
	}
	var err error
	if act.ActionID, err = obj.requiredID("action", "action_id"); err != nil {
		return act, err
	}
	if act.Kind, err = obj.requiredID("action", "kind"); err != nil {
		return act, err
	}
	risk, ok, err := obj.str("action", "risk")
	if err == nil && !ok {
		err = badArg("action.risk", "is required: low, medium or high")
	}
	if err != nil {
		return act, err
	}
	act.Risk = risk
	if !obj.has("reversible") {
		return act, badArg("action.reversible", "is required (true or false); it is never assumed")
	}
	act.Reversible, err = obj.boolean("action", "reversible", false)
	return act, err
}

// asActionError re-codes an argument refusal as an action refusal.
func asActionError(err error) error {
	if we, ok := err.(*warrant.Error); ok && we.Code == CodeInvalidArgument {
		return &warrant.Error{Code: warrant.CodeInvalidAction, Field: we.Field, Rule: we.Rule}
	}
	return err
}

// checkSkew refuses an evaluated_at that is unparseable or more than
// MaxEvaluatedAtSkew from now: a caller must not move the gate's clock.
func checkSkew(a args, now time.Time) error {
	t, err := evaluatedAt(a, false)
	if err != nil || t == "" {
		return err
	}
	within, parsed := withinSkew(t, now, MaxEvaluatedAtSkew)
	if !parsed {
		return refuse(warrant.CodeEvaluatedAtSkew, "evaluated_at",
			"%q is not a parseable instant; omit evaluated_at, may_act decides at the server clock", t)
	}
	if !within {
		return refuse(warrant.CodeEvaluatedAtSkew, "evaluated_at",
			"%q is more than %d s from the server clock (%s); omit it, may_act decides at the server clock",
			t, int(MaxEvaluatedAtSkew.Seconds()), now.UTC().Format(timeLayout))
	}
	return nil
}

// latestForAction reads the latest snapshot and refuses a view_id that is
// not it: an action must rest on the newest evidence.
func (s *Server) latestForAction(ctx context.Context, a args, pid string) (*warrant.View, error) {
	vid, _, err := a.id("", "view_id")
	if err != nil {
		return nil, err
	}
	latest, err := s.snapshot(ctx, pid, "")
	if err != nil {
		return nil, err
	}
	if vid != "" && vid != latest.ViewID {
		return nil, refuse(warrant.CodeStaleViewForAction, "view_id",
			"%q is not the latest snapshot of %q (the latest is %q); re-read the evidence before acting",
			vid, pid, latest.ViewID)
	}
	return latest, nil
}
