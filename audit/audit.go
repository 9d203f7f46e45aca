// Package audit holds the accountable gate's domain: decisions on record
// and human approvals. Every may_act and check_grounding call is recorded
// as a Decision in an append-only, hash-chained log before its answer is
// sent; an Approval is a runtime object only an operator creates (never an
// agent's MCP session) that lets one REQUIRE_CONFIRMATION decision, or a
// scope of them, go ahead.
//
// The types here are store-neutral; a Log is implemented by a store
// package (audit/sqlite, audit/postgres) and consumed by package mcp and
// by cmd/ewp-audit.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Tools whose calls are recorded.
const (
	ToolMayAct         = "may_act"
	ToolCheckGrounding = "check_grounding"
	// ToolCall is a tool call an entrance forwards (a gateway, a client
	// hook) once the gate allows it; its tool_name is the call's
	// SERVER/TOOL.
	ToolCall = "tool_call"
)

// Outcomes of a decision. Refused is a call that was refused before any
// layer decided (bad arguments, skew, stale view, …); its Code says why.
const (
	OutcomeMayAct              Outcome = "MAY_ACT"
	OutcomeRequireConfirmation Outcome = "REQUIRE_CONFIRMATION"
	OutcomeDeny                Outcome = "DENY"
	OutcomeRefused             Outcome = "REFUSED"
	// OutcomeAnswered is a check_grounding call that was answered.
	OutcomeAnswered Outcome = "ANSWERED"
)

// Caller is who made the call, as far as the transport knows it.
type Caller struct {
	ClientName    string `json:"client_name,omitempty"`    // from initialize
	ClientVersion string `json:"client_version,omitempty"` // from initialize
	Transport     string `json:"transport"`                // "stdio" | "http" | "inprocess"
	RemoteAddr    string `json:"remote_addr,omitempty"`
	Role          string `json:"role"`                 // "evaluate" | "ingest"
	Credential    string `json:"credential,omitempty"` // the credential's name, never its secret
}

// Layer is one gate layer's verdict as it was answered.
type Layer struct {
	Layer    string   `json:"layer"`
	Decision Verdict  `json:"decision"`
	Reasons  []string `json:"reasons"`
	Detail   any      `json:"detail,omitempty"`
}

// Decision is one recorded gate call.
type Decision struct {
	ID   string    `json:"decision_id"` // time-ordered UUID (v7)
	Time time.Time `json:"time"`        // server clock, UTC
	Tool string    `json:"tool"`
	// Caller is who asked.
	Caller Caller `json:"caller"`
	// Agent is the principal the call was judged for (Principal.Name):
	// "" on records made before agent identities, never "" on new ones
	// (Anonymous where no credential named one). AgentGroups are its
	// groups at the time of the call.
	Agent       string   `json:"agent,omitempty"`
	AgentGroups []string `json:"agent_groups,omitempty"`
	// The evidence judged: the proposition, its snapshot and the sha256 of
	// that snapshot's canonical form (EWP §8). Empty when none was judged.
	PropositionID string `json:"proposition_id,omitempty"`
	ViewID        string `json:"view_id,omitempty"`
	ViewHash      string `json:"view_hash,omitempty"`
	// The action as decoded. ArgumentsHash binds its arguments (what an
	// approval covers); Arguments shows them to whoever answers: the
	// arguments with the fields the operator named redacted, bounded in
	// size (ArgumentsTruncated: a JSON string holding the start of their
	// text). See package mcp, MaxRecordedArgumentsBytes.
	ActionID   string   `json:"action_id,omitempty"`
	ActionKind string   `json:"action_kind,omitempty"`
	Risk       string   `json:"risk,omitempty"`
	Reversible *bool    `json:"reversible,omitempty"`
	Concepts   []string `json:"concepts,omitempty"`
	// Cardinality and MinDepth are action.cardinality and
	// action.min_depth as sent (the edge-policy layer reads them); ""
	// and nil when the caller did not say.
	Cardinality        string          `json:"cardinality,omitempty"`
	MinDepth           *int            `json:"min_depth,omitempty"`
	ToolName           string          `json:"tool_name,omitempty"`
	ArgumentsHash      string          `json:"arguments_hash,omitempty"` // sha256 hex of the canonical arguments JSON
	Arguments          json.RawMessage `json:"arguments,omitempty"`
	ArgumentsTruncated bool            `json:"arguments_truncated,omitempty"`
	// What it was judged under.
	GraphVersion  int64    `json:"graph_version,omitempty"`
	PolicyIDs     []string `json:"policy_ids,omitempty"`
	PolicySetHash string   `json:"policy_set_hash,omitempty"`
	RiskPolicy    any      `json:"risk_policy,omitempty"`
	// What was decided.
	Layers     []Layer `json:"layers,omitempty"`
	Outcome    Outcome `json:"outcome"`
	Code       string  `json:"code,omitempty"`    // the EWP code of a refusal
	Message    string  `json:"message,omitempty"` // the refusal's message
	ApprovalID string  `json:"approval_id,omitempty"`
	// IdempotencyKey, when the agent gave one: a retry with the same key
	// from the same caller credential gets this decision back.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// Verdicts of an approval.
const (
	Approved = "approved"
	Rejected = "rejected"
)

// Scope is what an approval covers beyond the one decision it answers.
// A scope covers an action only where every non-empty field matches; it
// always requires its proposition ("" only for a guard-only decision,
// and then only calls naming none), names at least one other field, and
// never covers more risk, less reversibility or a laxer risk policy than
// the decision it answered (see Approval.Covers).
type Scope struct {
	PropositionID string   `json:"proposition_id,omitempty"`
	ActionKind    string   `json:"action_kind,omitempty"`
	Concepts      []string `json:"concepts,omitempty"`
	ToolName      string   `json:"tool_name,omitempty"`
}

// Approval is an operator's answer to a REQUIRE_CONFIRMATION decision.
type Approval struct {
	ID         string    `json:"approval_id"` // time-ordered UUID (v7)
	DecisionID string    `json:"decision_id"` // the decision it answers
	Verdict    string    `json:"verdict"`     // Approved | Rejected
	Approver   string    `json:"approver"`
	Note       string    `json:"note,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	// Once: usable by exactly one may_act call that repeats the decision's
	// action exactly. Otherwise Scope (and Until) say what it covers.
	Once  bool      `json:"once"`
	Scope *Scope    `json:"scope,omitempty"`
	Until time.Time `json:"until,omitzero"` // zero: no expiry (only for Once)
	// Agent is the agent the approval is bound to: the answered
	// decision's, unless the operator widened it to any agent (AnyAgent).
	// Both are signed.
	Agent    string `json:"agent,omitempty"`
	AnyAgent bool   `json:"any_agent,omitempty"`
	// Action is the answered decision's proposition and action, copied
	// when the approval is stored: what the operator saw, and what a Once
	// approval must be repeated exactly (see Covers).
	Action *Action `json:"action,omitempty"`
	// KeyID names the operator key that signed the approval (KeyID) and
	// Signature is its Ed25519 signature over SignedPayload, standard
	// base64: the gate honours only an approval one of its operator keys
	// signed (OperatorKeys.Verify).
	KeyID     string `json:"key_id,omitempty"`
	Signature string `json:"signature,omitempty"`
}

// Head names the last entry of the log's hash chain (as ledger.Head).
type Head struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// Filter selects decisions for List. Zero fields select everything.
type Filter struct {
	Since, Until  time.Time
	Outcome       Outcome // "" selects every outcome
	PropositionID string
	// Pending selects REQUIRE_CONFIRMATION decisions with no approval or
	// rejection yet.
	Pending bool
	// After is the decision_id to continue after (pagination); Limit caps
	// the page (0: a store default).
	After string
	Limit int
}

// Errors a Log returns (wrapped as needed).
var (
	ErrNotFound     = errors.New("audit: not found")
	ErrApprovalUsed = errors.New("audit: single-use approval already used")
	ErrDuplicateKey = errors.New("audit: idempotency key already recorded")
	// ErrAgentExists: AddAgent was given a name already taken.
	ErrAgentExists = errors.New("audit: agent name already taken")
	// ErrNotMayAct: RecordUse was given a decision that is not MAY_ACT.
	ErrNotMayAct = errors.New("audit: only a MAY_ACT decision uses an approval")
)

// Log is the decision log. Record must be durable (committed) when it
// returns: the server sends an answer only after its decision is on record.
// Implementations batch concurrent Records into shared commits.
type Log interface {
	Record(ctx context.Context, d *Decision) error
	Decision(ctx context.Context, id string) (*Decision, error)
	// ByIdempotencyKey returns the decision recorded under (credential,
	// key), or ErrNotFound.
	ByIdempotencyKey(ctx context.Context, credential, key string) (*Decision, error)
	List(ctx context.Context, f Filter) ([]Decision, error)

	// Approve records an operator's approval or rejection of a decision.
	Approve(ctx context.Context, a *Approval) error
	Approval(ctx context.Context, id string) (*Approval, error)
	// ApprovalsFor lists the approvals and rejections answering a decision.
	ApprovalsFor(ctx context.Context, decisionID string) ([]Approval, error)
	// RecordUse records d, a MAY_ACT decision that the single-use
	// approval d.ApprovalID lifted, together with that approval's use by
	// d, in one transaction: both are on record, or neither is. Of
	// concurrent calls presenting one approval exactly one succeeds; the
	// others get ErrApprovalUsed (naming the decision that used it) and
	// record nothing, so the server decides them again without the
	// approval. It refuses, recording nothing, what Record refuses and
	// what Approval.Consumable refuses at the log's clock, an unknown
	// approval (ErrNotFound) and a decision that is not MAY_ACT
	// (ErrNotMayAct): only an answer of MAY_ACT ever uses an approval. The
	// use is an entry of the chain of its own, right after the decision's.
	RecordUse(ctx context.Context, d *Decision) error

	Head(ctx context.Context) (Head, error)
	Close() error
}

// CompactJSON is a value already encoded as JSON in the form json.Marshal
// writes (compact, HTML-escaped), to be carried in a Decision's fields of
// type any: the log's encoder copies it as it is, where encoding/json
// would scan it again. A value of another form makes the record's bytes
// differ from json.Marshal's (the record still decodes the same).
type CompactJSON []byte

// MarshalJSON returns c itself.
func (c CompactJSON) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	return c, nil
}

// AppendJSONString appends s as a JSON string exactly as encoding/json
// writes it, for the encoders of the record's hot path. Strings of
// printable ASCII that json escapes nowhere (no quote, backslash or
// HTML-sensitive <, >, &) are copied; any other goes through
// encoding/json itself, so escaping rules are never restated.
func AppendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, err := json.Marshal(s)
			if err != nil {
				panic(err) // a string always marshals
			}
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
