package manifest

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

// Entrances, as gate.ToolCall.Entrance names them.
const (
	EntranceGateway    = "gateway"
	EntranceClaudeCode = "claude-code"
	EntranceOpenClaw   = "openclaw"
	EntranceToolCall   = "tool-call"
)

// Request is the gate's request for the call, asked by p through
// entrance: the action as the manifest describes it (ActionID is the
// call's SERVER/TOOL), its first proposition as PropositionID and the
// rest as Propositions, the guard fields built as may_act builds them
// (only when the call has concepts: the guard judges nothing else), and
// Call for the record and the once-approval lookup. The risk policy is
// the default one: an entrance with the ingest role may replace it.
//
// A Deny call is for the entrance to refuse, not to ask about; a request
// built from one anyway is high-risk and irreversible.
func (c *Call) Request(p audit.Principal, entrance string) gate.Request {
	act := warrant.Action{ActionID: c.Name, Kind: c.Kind, Risk: c.Risk, Reversible: c.Reversible}
	r := gate.Request{
		Action:       act,
		ActionFields: c.actionFields(act),
		RiskPolicy:   warrant.DefaultRiskPolicy(),
		Agent:        p,
		Call: &gate.ToolCall{Entrance: entrance, Name: c.Name, Rule: c.Rule,
			Arguments: c.Arguments, Recorded: c.Recorded, ConfirmBy: c.ConfirmBy},
	}
	if len(c.Propositions) > 0 {
		r.PropositionID = c.Propositions[0]
		r.Propositions = append([]string(nil), c.Propositions[1:]...)
	}
	if len(c.Concepts) > 0 {
		r.Guard = gate.NewGuardCall(gate.GuardAction{
			Concepts:    append([]string(nil), c.Concepts...),
			MinDepth:    c.MinDepth,
			Cardinality: c.Cardinality,
			ToolName:    c.Name,
			Arguments:   c.arguments(),
		})
	}
	return r
}

// arguments is the decoded arguments with numbers as json.Number, as the
// guard reads them (may_act's toolArguments); decoded again from
// Arguments for a Call not made by Describe.
func (c *Call) arguments() map[string]any {
	if c.args != nil {
		return c.args
	}
	dec := json.NewDecoder(bytes.NewReader(c.Arguments))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil || m == nil {
		m = map[string]any{}
	}
	return m
}

// actionFields is the action object may_act would have been sent for
// this call, member by member, for the layers that read ActionFields.
func (c *Call) actionFields(act warrant.Action) map[string]json.RawMessage {
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	f := map[string]json.RawMessage{
		"action_id":  str(act.ActionID),
		"kind":       str(act.Kind),
		"risk":       str(act.Risk),
		"reversible": json.RawMessage(strconv.FormatBool(act.Reversible)),
	}
	if len(c.Concepts) == 0 {
		return f
	}
	concepts, _ := json.Marshal(c.Concepts)
	f["concepts"], f["tool_name"] = concepts, str(c.Name)
	f["arguments"] = c.Arguments // Describe's canonical encoding of args
	if c.args == nil {
		f["arguments"] = canonical(c.arguments())
	}
	if c.Cardinality != "" {
		f["cardinality"] = str(c.Cardinality)
	}
	if c.MinDepth != nil {
		f["min_depth"] = json.RawMessage(strconv.Itoa(*c.MinDepth))
	}
	return f
}

// Denied is the refusal of a Deny call, for the entrance to record and
// answer without asking the gate (every entrance words it alike); nil
// when the call is not denied.
func (c *Call) Denied() *Error {
	if !c.Deny {
		return nil
	}
	why := "the manifest's rule denies " + c.Name
	if c.Rule == DefaultRule {
		why = "no rule of the manifest matches " + c.Name + ", and its default is deny"
	}
	return &Error{Code: CodeDeniedByManifest, Field: "/name", Rule: c.Rule, Reason: why}
}
