package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

// Codes this package adds to the warrant.Code* set. Every other refusal
// uses the warrant package's codes, so a caller sees one vocabulary.
const (
	// CodeInvalidArgument: a tool argument has the wrong type or value, or
	// is not an argument of the tool at all.
	CodeInvalidArgument = gate.CodeInvalidArgument
	// CodeInternal: the ledger failed for a reason that is not a refusal
	// (I/O, corruption). The message says what failed.
	CodeInternal = gate.CodeInternal
	// CodeTimeout: the call ran past the server's per-request deadline
	// (ewp-mcp --request-timeout) and was abandoned; a write was not
	// stored. Not a judgement of the input: the same call may succeed on
	// a less loaded server or with a longer deadline.
	CodeTimeout = gate.CodeTimeout
	// CodeStoreUnavailable: the ledger's (or the decision log's) database
	// could not be reached or did not answer in time: it is down,
	// restarting, or refusing connections. Not a judgement of the input
	// and nothing was decided: the same call may succeed in a moment,
	// here or on another replica; the server reconnects by itself.
	CodeStoreUnavailable = gate.CodeStoreUnavailable
)

// ErrStoreUnavailable marks (wrapped) a store failure that is the
// database being unreachable; see CodeStoreUnavailable. A Store wraps its
// failure with it (fmt.Errorf("%w: %w", ErrStoreUnavailable, err)).
// It is the gate's (gate.ErrStoreUnavailable), which also names the log's.
var ErrStoreUnavailable = gate.ErrStoreUnavailable

// toolError is the JSON a failed tool call carries in its text content.
type toolError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
	// DecisionID is the record of a refused call that was recorded (a
	// refused may_act or check_grounding), as on every answer.
	DecisionID string `json:"decision_id,omitempty"`
}

// refuse builds a refusal. The rule is formatted like fmt.Sprintf.
func refuse(code, field, rule string, args ...any) *warrant.Error {
	if len(args) > 0 {
		rule = fmt.Sprintf(rule, args...)
	}
	return &warrant.Error{Code: code, Field: field, Rule: rule}
}

// badArg is the common refusal for a malformed argument.
func badArg(field, rule string, args ...any) *warrant.Error {
	return refuse(CodeInvalidArgument, field, rule, args...)
}

// asToolError maps any error to the code and message a caller sees. Only
// *warrant.Error carries a refusal code; everything else is internal,
// because guessing a code for an unknown failure would mislead the caller.
func asToolError(err error) toolError {
	te := codeOf(err)
	var rec *gate.RecordedError
	if errors.As(err, &rec) {
		te.DecisionID = rec.ID
	}
	return te
}

func codeOf(err error) toolError {
	if errors.Is(err, ErrStoreUnavailable) {
		return toolError{Error: CodeStoreUnavailable, Message: err.Error() +
			"; nothing was decided: retry in a moment (on this replica or another), and tell the operator if it lasts"}
	}
	var we *warrant.Error
	if errors.As(err, &we) {
		msg := we.Message()
		if we.Code == warrant.CodeLimitExceeded {
			msg = withLimitHint(msg)
		}
		return toolError{Error: we.Code, Message: msg}
	}
	return toolError{Error: CodeInternal, Message: "the server failed: " + err.Error()}
}

// failure is the isError result of a refused or failed call.
func failure(err error) toolResult {
	body, _ := json.Marshal(asToolError(err)) // strings never fail to marshal
	return toolResult{body: body, isError: true}
}

// success carries out both as structuredContent and as JSON text, for
// clients that only read text; it is encoded once for both.
func success(out any) (toolResult, error) {
	body, err := json.Marshal(out)
	if err != nil {
		return toolResult{}, fmt.Errorf("encode tool result: %w", err)
	}
	return toolResult{body: body}, nil
}
