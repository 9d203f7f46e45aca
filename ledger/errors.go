package ledger

import "errors"

// Error is a ledger (storage) failure as opposed to a refusal of the input,
// which is a *warrant.Error. Callers map the two to different exit codes
// and MCP errors.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "ledger: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ErrBrokenChain is wrapped by the error of a write refused because the
// ledger's chain is visibly broken at its tail.
var ErrBrokenChain = errors.New("the ledger's hash chain is broken")

// ErrSchemaVersion is wrapped by the error for a ledger of another layout.
var ErrSchemaVersion = errors.New("ledger schema version mismatch")
