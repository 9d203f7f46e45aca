package gate

import (
	"errors"

	"github.com/ewp-go/ewp/warrant"
)

// Codes the gate adds to the warrant.Code* set; an entrance names them as
// its own (mcp's are these).
const (
	// CodeInvalidArgument: an argument has the wrong type or value.
	CodeInvalidArgument = "EWP_REFUSE_INVALID_ARGUMENT"
	// CodeInternal: a failure that is not a refusal (I/O, corruption).
	CodeInternal = "EWP_INTERNAL_ERROR"
	// CodeTimeout: the call ran past its deadline and was abandoned.
	CodeTimeout = "EWP_REFUSE_TIMEOUT"
	// CodeStoreUnavailable: the ledger's or the log's database could not
	// be reached; nothing was decided.
	CodeStoreUnavailable = "EWP_STORE_UNAVAILABLE"
	// CodeApprovalsDisabled: an approval_id without a decision log.
	CodeApprovalsDisabled = "EWP_REFUSE_APPROVALS_DISABLED"
	// CodeNoDecisionLog: idempotency_key needs the decision log, which is off.
	CodeNoDecisionLog = "EWP_REFUSE_NO_DECISION_LOG"
	// CodeIdempotencyKeyReused: the key was already used for a different
	// call (another proposition, action or approval).
	CodeIdempotencyKeyReused = "EWP_REFUSE_IDEMPOTENCY_KEY_REUSED"
	// CodeIdempotencyKeyExpired: the key names a decision that is no
	// longer answered from the record.
	CodeIdempotencyKeyExpired = "EWP_REFUSE_IDEMPOTENCY_KEY_EXPIRED"
)

// ErrStoreUnavailable marks (wrapped) a store failure that is the
// database being unreachable; see CodeStoreUnavailable.
var ErrStoreUnavailable = errors.New("the evidence store is unavailable")

// RecordedError is a refusal that is on record as decision ID.
type RecordedError struct {
	Err error
	ID  string
}

func (e *RecordedError) Error() string { return e.Err.Error() }
func (e *RecordedError) Unwrap() error { return e.Err }

// PanicError is a panic the gate recovered while evaluating a call: the
// gate's own failure, not recorded (as an entrance's own panic is not).
type PanicError struct{ Err error }

func (e *PanicError) Error() string { return e.Err.Error() }
func (e *PanicError) Unwrap() error { return e.Err }

// Explain is the code and message a refusal err is recorded (and, by
// default, answered) with. Only *warrant.Error carries a refusal code;
// everything else is internal.
func Explain(err error) (code, message string) {
	if errors.Is(err, ErrStoreUnavailable) {
		return CodeStoreUnavailable, err.Error() +
			"; nothing was decided: retry in a moment (on this replica or another), and tell the operator if it lasts"
	}
	var we *warrant.Error
	if errors.As(err, &we) {
		return we.Code, we.Message()
	}
	return CodeInternal, "the server failed: " + err.Error()
}
