package audit

import (
	"context"
	"time"
)

// Principal is who asks the gate: an agent the operator created (its
// name and groups), or Anonymous where an entrance knows no identity. It
// is the Cedar principal Agent::"NAME" with its groups as parents
// Group::"G", and it is on every decision.
type Principal struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups,omitempty"`
}

// Anonymous is the principal of a call no credential names.
const Anonymous = "anonymous"

// AgentRecord is an agent identity the operator created with
// `ewp-audit agents add`. Its credential is shown once and stored only as
// its sha256 (CredentialSHA256, lower-case hex).
type AgentRecord struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups,omitempty"`
	// Ingest: the credential also carries the ingest role (it may write
	// evidence and set a risk policy).
	Ingest           bool      `json:"ingest,omitempty"`
	CredentialSHA256 string    `json:"credential_sha256"`
	CreatedAt        time.Time `json:"created_at"`
	// RevokedAt is zero while the agent may call.
	RevokedAt time.Time `json:"revoked_at,omitzero"`
}

// Principal is the record's principal.
func (r *AgentRecord) Principal() Principal {
	return Principal{Name: r.Name, Groups: append([]string(nil), r.Groups...)}
}

// Agents is the operator's register of agent identities, kept in the
// decision log's database. A revocation takes effect on the next lookup:
// nothing caches AgentByCredential.
type Agents interface {
	// AddAgent stores a new agent; ErrAgentExists when the name is taken
	// (revoked names are not reused).
	AddAgent(ctx context.Context, r *AgentRecord) error
	// ListAgents lists every agent, revoked ones included, by name.
	ListAgents(ctx context.Context) ([]AgentRecord, error)
	// RevokeAgent revokes the named agent at at; ErrNotFound when none.
	RevokeAgent(ctx context.Context, name string, at time.Time) error
	// AgentByCredential finds the live agent whose credential hashes to
	// sha256hex; ErrNotFound for an unknown or revoked one.
	AgentByCredential(ctx context.Context, sha256hex string) (*AgentRecord, error)
}

// Outcomes of a forwarded call, recorded after the downstream answered
// (Result): what was done, not only what was allowed.
const (
	ResultOK        ResultStatus = "ok"
	ResultToolError ResultStatus = "tool_error"
	ResultFailed    ResultStatus = "failed"
	// ResultNotRun: a client hook reported that the tool did not run.
	ResultNotRun ResultStatus = "not_run"
)

// ResultStatus is how a forwarded call ended.
type ResultStatus string

// Result is what happened after a MAY_ACT decision let a call through:
// an entry of the chain of its own, after its decision's.
type Result struct {
	DecisionID string       `json:"decision_id"`
	Time       time.Time    `json:"time"`
	Status     ResultStatus `json:"status"`
	// SHA256 is the hex sha256 of the result as the downstream sent it
	// ("" when it sent none).
	SHA256 string `json:"sha256,omitempty"`
	// Message says why a call failed (bounded, never the result itself).
	Message string `json:"message,omitempty"`
}

// Results records and reads the results of forwarded calls.
type Results interface {
	RecordResult(ctx context.Context, r *Result) error
	ResultsFor(ctx context.Context, decisionID string) ([]Result, error)
}

// OnceApprovals finds the approval that lets a repeated tool call through
// without the agent ever handling an approval id: the newest approved,
// single-use, unexpired and unused approval of a REQUIRE_CONFIRMATION
// decision with the same agent, tool name and arguments hash (and, unless
// the approval was widened with AnyAgent, for that agent); ErrNotFound
// when there is none. Using it is still RecordUse's atomic step.
type OnceApprovals interface {
	OnceApprovalFor(ctx context.Context, agent, toolName, argumentsHash string, now time.Time) (*Approval, error)
}

// Counters are the budgets' counts: Add adds n to the count under key in
// the window that starts at window and returns the new count, atomically
// across processes (replicas on one PostgreSQL share them) and durably
// (they survive a restart).
type Counters interface {
	Add(ctx context.Context, key string, window time.Time, n int64) (int64, error)
}
