package gate

import (
	"encoding/json"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// Request is one call to the gate, decoded once by its entrance (the MCP
// may_act tool, a gateway, a client hook): who asks, which action, on
// which evidence, under which policy. Nothing after the entrance reads
// the caller's bytes again.
type Request struct {
	// Ingest is whether the caller holds the operator's ingest role (only
	// it may set RiskPolicy).
	Ingest bool
	// PropositionID is the stored proposition the action relies on; ""
	// for an action that names concepts only (the warrant layer is then
	// skipped).
	PropositionID string
	// ViewID, when not "", is the snapshot the caller looked at: refused
	// unless it is still the latest.
	ViewID string
	// EvaluatedAt, when not "", is the instant the caller believes it is,
	// as sent: refused when unparseable or too far from the server clock
	// (MaxEvaluatedAtSkew); the gate always decides at its own clock.
	EvaluatedAt string
	Action      warrant.Action
	// ActionFields is the action object as sent, member by member, for
	// the layers that claim extra keys.
	ActionFields map[string]json.RawMessage
	// Guard is the action's guard fields; nil when it names no concepts
	// or no guard is installed.
	Guard *GuardCall
	// RiskPolicy is the policy the action is judged under (the default
	// unless an ingest caller sent one; the zero policy means the default).
	RiskPolicy warrant.RiskPolicy
	// ApprovalID names an operator's approval the caller presents; "" for
	// none.
	ApprovalID string
	// IdempotencyKey, when not "", makes a retry answer the decision first
	// recorded under it.
	IdempotencyKey string
	// Agent is who asks; Name "" is treated as audit.Anonymous when the
	// gate looks an approval up for it, and recorded as given (an
	// entrance that knows no principal records none).
	Agent audit.Principal
	// Caller is the transport's facts about the call, for the record.
	Caller audit.Caller
	// Propositions are further propositions the action relies on: the
	// warrant layer judges each on its latest snapshot, reports a layer
	// per proposition, and the most restrictive wins. When PropositionID
	// is "", the first of them takes its place in the answer and record.
	Propositions []string
	// Call is set by the entrances that forward a tool call (the gateway,
	// the client hooks): the call is then recorded as audit.ToolCall, and
	// the evidence layer and the once-approval lookup apply.
	Call *ToolCall
	// Deferred are refusals the entrance met while decoding, raised where
	// the protocol raises them (after the action is noted in the record
	// and an idempotent retry is answered).
	Deferred Deferred
	// Done, when set, is called once the evaluation has ended, which may
	// be after Decide answered at its deadline (the MCP entrance frees its
	// evaluation slot there).
	Done func()
}

// Deferred are the refusals of the evidence pins, decoded at the entrance
// but raised in the gate's order.
type Deferred struct {
	// EvaluatedAt: evaluated_at did not decode.
	EvaluatedAt error
	// ViewID: view_id did not decode (it was given, then).
	ViewID error
}

// ToolCall is a tool call an entrance forwards once the gate allows it,
// as the operator's manifest described it.
type ToolCall struct {
	// Entrance is "gateway", "claude-code", "openclaw" or "tool-call".
	Entrance string
	// Name is "SERVER/TOOL" as the manifest matched it (recorded as
	// tool_name).
	Name string
	// Rule is the manifest rule that matched (its match pattern, or
	// "default").
	Rule string
	// Arguments is the canonical JSON of the arguments: its sha256 is the
	// record's arguments_hash, which a once-approval binds.
	Arguments json.RawMessage
	// Recorded is the arguments with the manifest's redactions, for the
	// record (cut at MaxRecordedArgumentsBytes as any arguments are).
	Recorded json.RawMessage
	// ConfirmBy is who confirms a REQUIRE_CONFIRMATION: "operator" (the
	// default, "") or "user".
	ConfirmBy string
}
