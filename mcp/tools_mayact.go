package mcp

import (
	"context"
	"encoding/json"

	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

func (s *Server) mayActTool() toolSpec {
	act, pidDesc, required := actionSchema(), "The stored proposition the action relies on.", []string{"proposition_id", "action"}
	if s.guard != nil {
		for k, v := range guardActionProps() {
			act["properties"].(schema)[k] = v
		}
		pidDesc += " Required unless action.concepts is given; without it the warrant layer is skipped and only the guard judges."
		required = []string{"action"}
	}
	in := schema{
		"properties": schema{
			"proposition_id": nonEmpty(pidDesc),
			"action":         act,
			"view_id":        nonEmpty("Optional: the snapshot you looked at. Refused unless it is still the latest, so you never act on evidence that has moved on."),
			"evaluated_at":   nonEmpty("Optional: the time you believe it is. Refused when more than 300 s from the server clock; the gate always decides at the server clock."),
			"risk_policy":    riskPolicySchema(),
		},
		"required": required,
	}
	addDecisionArgs(in["properties"].(schema))
	t := readTool("may_act",
		"The live action gate: MAY_ACT, REQUIRE_CONFIRMATION or DENY for an action that relies on a stored "+
			"proposition, decided on its latest stored snapshot at the server clock. It never takes an inline "+
			"view or a WarrantView. Follow the decision: ask the user on REQUIRE_CONFIRMATION, do not act on DENY. "+
			s.guardNote()+rulesShort, in, mayActOutput(s.guard != nil), s.mayAct)
	t.pre = refuseInlineEvidence
	return t
}

// guardNote tells the agent about the guard fields when they exist.
func (s *Server) guardNote() string {
	if s.guard == nil {
		return ""
	}
	return "Before a tool call that changes things, also name action.concepts (every concept the call touches, " +
		"e.g. [\"delete\", \"file\"]), action.tool_name and action.arguments: the grounding and edge-policy layers " +
		"then judge it too. "
}

// mayActOutput is the result schema. With the guard, the warrant fields are
// present only when the action named a proposition.
func mayActOutput(guard bool) schema {
	verdicts := []string{string(warrant.MayActDecision), string(warrant.RequireConfirmation), string(warrant.Deny)}
	decisions := append([]string{}, verdicts...)
	required := []string{"decision", "layers", "proposition_id", "view_id", "evaluated_at", "action", "warrant", "risk_policy"}
	if guard {
		decisions = append(decisions, string(gate.Skipped))
		required = []string{"decision", "layers", "evaluated_at", "action", "risk_policy"}
	}
	layer := object("One layer's verdict.", schema{
		"layer":    str("warrant, then any guard layers (grounding, edge_policies), then approval when approval_id was given."),
		"decision": enum("SKIPPED only for the warrant layer of an action without proposition_id.", decisions...),
		"reasons":  idList("The rules that produced the decision."),
		"detail":   schema{"description": "Layer-specific detail."},
	}, "layer", "decision", "reasons")
	return object("The gate's decision.", schema{
		"decision":       enum("The most restrictive decision of all layers.", verdicts...),
		"layers":         array("Each layer's verdict, warrant first.", layer),
		"proposition_id": str("The proposition the action relies on (absent when the warrant layer was skipped)."),
		"view_id":        str("The latest snapshot, which was judged."),
		"evaluated_at":   str("The server clock at the decision."),
		"action":         actionSchema(),
		"warrant":        axesSchema(),
		"risk_policy":    riskPolicySchema(),
	}, required...)
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

// decodeMayAct reads may_act's arguments once, in the order their
// refusals take precedence: the size caps, risk_policy, proposition_id,
// the action and its guard fields, approval_id, idempotency_key, then the
// evidence pins. The pins' refusals are decoded here with the rest but
// raised where the protocol has always raised them (gate.Deferred): after
// the action is noted in the record and an idempotent retry is answered,
// so an agent sees the same refusal first and the log keeps the same
// record. Nothing after it reads a.
func (s *Server) decodeMayAct(ctx context.Context, a args, c *gate.Request) error {
	if err := s.entrance(a); err != nil {
		return err
	}
	c.Ingest, c.Agent = hasIngest(ctx), requestAgent(ctx)
	var err error
	if c.RiskPolicy, err = riskPolicy(ctx, a); err != nil {
		return err
	}
	fields, actionErr := s.actionObject(a)
	if c.PropositionID, err = s.mayActProposition(a, fields, actionErr); err != nil {
		return err
	}
	if actionErr != nil {
		return actionErr
	}
	if c.Action, c.ActionFields, err = s.decodeAction(fields); err != nil {
		return err
	}
	if c.Guard, err = s.guardFor(c.ActionFields); err != nil {
		return err
	}
	if c.ApprovalID, _, err = a.id("", "approval_id"); err != nil {
		return err
	}
	if c.IdempotencyKey, _, err = a.id("", "idempotency_key"); err != nil {
		return err
	}
	c.EvaluatedAt, c.Deferred.EvaluatedAt = evaluatedAt(a, false)
	c.ViewID, _, c.Deferred.ViewID = a.id("", "view_id")
	if s.decisions != nil {
		c.Caller = callerFrom(ctx)
	}
	return nil
}

// mayAct decodes the call and asks the gate, which decides, records and
// answers (gate.Decide).
func (s *Server) mayAct(ctx context.Context, a args) (any, error) {
	var r gate.Request
	if err := s.decodeMayAct(ctx, a, &r); err != nil {
		return nil, err
	}
	r.Done = s.slotDone(ctx)
	ans, err := s.gate.Decide(ctx, r)
	if err != nil {
		return nil, asked(err)
	}
	return mayActAnswer{&ans}, nil
}

// mayActAnswer renders the gate's answer as may_act's result: the fields
// of a skipped warrant layer, the decision_id without a log, and
// replayed on a fresh decision are left out.
type mayActAnswer struct{ *gate.Answer }

func (a mayActAnswer) MarshalJSON() ([]byte, error) {
	// Sized for every key the answer can have.
	out := make(map[string]any, 12)
	out["decision"], out["layers"], out["evaluated_at"] = a.Decision, a.Layers, a.EvaluatedAt
	out["action"], out["risk_policy"] = a.Action, a.RiskPolicy
	if a.PropositionID != "" {
		out["proposition_id"], out["view_id"], out["warrant"] = a.PropositionID, a.ViewID, a.Warrant
	}
	if a.DecisionID != "" {
		out["decision_id"] = a.DecisionID
	}
	if a.Replayed {
		out["replayed"] = true
	}
	return json.Marshal(out)
}

// actionObject splits the action object once; its refusal is raised only
// after proposition_id's (see mayActProposition).
func (s *Server) actionObject(a args) (args, error) {
	raw, ok := a["action"]
	if !ok {
		return nil, refuse(warrant.CodeInvalidAction, "action",
			"is required: {action_id, kind, risk: low|medium|high, reversible: true|false}")
	}
	obj, err := decodeObject("action", raw)
	if err != nil {
		return nil, asActionError(err)
	}
	return obj, nil
}

// mayActProposition reads proposition_id, which only an action naming
// concepts may omit (GROUNDING.md §0: the action "may name" the
// propositions it relies on). action is the split action object, nil
// when it did not decode (actionErr).
func (s *Server) mayActProposition(a, action args, actionErr error) (string, error) {
	pid, ok, err := a.id("", "proposition_id")
	if err != nil || ok {
		return pid, err
	}
	if s.guard == nil {
		return "", badArg("proposition_id", "is required (a non-empty string)")
	}
	if actionErr == nil && action.has("concepts") {
		return "", nil
	}
	return "", badArg("proposition_id", "is required (a non-empty string) unless action.concepts names the concepts the action touches")
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

// decodeAction reads the action from its split object (actionObject).
// Every malformed field is EWP_REFUSE_INVALID_ACTION; reversible is never
// assumed.
func (s *Server) decodeAction(obj args) (warrant.Action, map[string]json.RawMessage, error) {
	act, err := actionFields(obj, gate.ActionKeys(s.layers))
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
