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
	// unless an ingest caller sent one).
	RiskPolicy warrant.RiskPolicy
	// ApprovalID names an operator's approval the caller presents; "" for
	// none.
	ApprovalID string
	// IdempotencyKey, when not "", makes a retry answer the decision first
	// recorded under it.
	IdempotencyKey string

	Agent  audit.Principal // who asks; Name "" is treated as audit.Anonymous
	Caller audit.Caller    // transport facts for the record
	// Propositions are further propositions the action relies on: the
	// warrant layer judges each, the most restrictive wins.
	Propositions []string
	Call         *ToolCall // set by the gateway and the hooks (manifest-driven)
}

// ToolCall is the tool call a request judges, as the operator's manifest
// described it; nil for may_act through MCP.
type ToolCall struct {
	Entrance  string          // "gateway" | "claude-code" | "openclaw" | "tool-call"
	Name      string          // "SERVER/TOOL" as the manifest matched it (recorded as tool_name)
	Rule      string          // the manifest rule that matched (its match pattern, or "default")
	Arguments json.RawMessage // canonical JSON of the arguments (hashed: arguments_hash)
	Recorded  json.RawMessage // the arguments with the manifest's redactions, for the record
	ConfirmBy string          // "operator" (default) | "user"
}
