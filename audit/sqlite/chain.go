package sqlite

import "github.com/ewp-go/ewp/audit/auditchain"

// The rows, payloads and link hash are the store-neutral ones of package
// auditchain, which the PostgreSQL log shares: both write the same chain.
// The short names keep this package's code as it was.
type (
	decisionRow = auditchain.DecisionRow
	approvalRow = auditchain.ApprovalRow
	// Use is the consumption of a single-use approval by a decision.
	Use = auditchain.Use
)

const (
	tableDecisions = auditchain.TableDecisions
	tableApprovals = auditchain.TableApprovals
	tableUses      = auditchain.TableUses
)

var (
	genesis         = auditchain.Genesis
	chainHash       = auditchain.Hash
	approvalColumns = auditchain.ApprovalColumns
	asJSON          = auditchain.AsJSON
	splitPayload    = auditchain.SplitPayload
	isRefusalErr    = auditchain.IsRefusal
	decodeDecision  = auditchain.DecodeDecision
	decodeApproval  = auditchain.DecodeApproval
)

// ErrBrokenLog is wrapped by the error of opening for writing, or
// appending to, a log whose triggers or tail are broken.
var ErrBrokenLog = auditchain.ErrBrokenLog
