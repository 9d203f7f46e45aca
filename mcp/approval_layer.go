package mcp

import "github.com/ewp-go/ewp/gate"

// Codes of the decision log's refusals, which the gate raises.
const (
	// CodeApprovalsDisabled: may_act got an approval_id but the server runs
	// without a decision log (ewp-mcp --audit off), so it has no approvals.
	CodeApprovalsDisabled = gate.CodeApprovalsDisabled
	// CodeNoDecisionLog: idempotency_key needs the decision log, which is off.
	CodeNoDecisionLog = gate.CodeNoDecisionLog
	// CodeIdempotencyKeyReused: the key was already used for a different
	// call (another proposition, action or approval).
	CodeIdempotencyKeyReused = gate.CodeIdempotencyKeyReused
	// CodeIdempotencyKeyExpired: the key names a decision that is no
	// longer answered from the record (past the replay window, or its
	// MAY_ACT came from an approval that could not give it now).
	CodeIdempotencyKeyExpired = gate.CodeIdempotencyKeyExpired
)

// Reasons of the approval layer, which the gate defines (gate.Approvals);
// named here too because MCP clients and tests know them as mcp's.
const (
	ReasonApproved                 = gate.ReasonApproved
	ReasonApprovalNotNeeded        = gate.ReasonApprovalNotNeeded
	ReasonApprovalCannotLift       = gate.ReasonApprovalCannotLift
	ReasonApprovalRejected         = gate.ReasonApprovalRejected
	ReasonApprovalExpired          = gate.ReasonApprovalExpired
	ReasonApprovalUsed             = gate.ReasonApprovalUsed
	ReasonApprovalOutOfScope       = gate.ReasonApprovalOutOfScope
	ReasonApprovalWrongAction      = gate.ReasonApprovalWrongAction
	ReasonApprovalWrongProposition = gate.ReasonApprovalWrongProposition
	ReasonApprovalUnknown          = gate.ReasonApprovalUnknown
	ReasonApprovalsDisabled        = gate.ReasonApprovalsDisabled
	ReasonApprovalUnsigned         = gate.ReasonApprovalUnsigned
	ReasonApprovalBadSignature     = gate.ReasonApprovalBadSignature
	ReasonApprovalUnknownKey       = gate.ReasonApprovalUnknownKey
	ReasonNoOperatorKeys           = gate.ReasonNoOperatorKeys
	ReasonApprovalNotOnChain       = gate.ReasonApprovalNotOnChain
)
