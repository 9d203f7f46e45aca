package manifest

import (
	"strconv"

	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

// Codes of the manifest's refusals. A manifest that does not parse is
// the operator's to fix (the gateway does not start); a call the manifest
// cannot describe is refused before the gate, with the argument at fault.
const (
	// CodeInvalidManifest: the manifest breaks its schema or a rule the
	// schema cannot say (a template, a pointer, a relative directory).
	CodeInvalidManifest = "EWP_REFUSE_INVALID_MANIFEST"
	// CodeInvalidArgument: a call's name or arguments cannot be read as
	// the matching rule needs (the gate's code).
	CodeInvalidArgument = gate.CodeInvalidArgument
	// CodeUnsafePath: a path argument is a look-alike of another path,
	// or one the kernel could not resolve either.
	CodeUnsafePath = "EWP_REFUSE_UNSAFE_PATH"
	// CodeDeniedByManifest: the manifest denies the call outright (a deny
	// rule, or no rule under default deny); see Call.Denied.
	CodeDeniedByManifest = "EWP_REFUSE_DENIED_BY_MANIFEST"
	// CodeLimitExceeded: a bound below was passed (warrant's code).
	CodeLimitExceeded = warrant.CodeLimitExceeded
)

// Error is a refusal naming the field, as a JSON pointer into the
// manifest (/tools/3/risk) or into the call (/arguments/path), and the
// manifest rule concerned, by its match pattern ("" for a top-level
// field; "default" for a call no rule matched).
type Error struct {
	Code   string
	Field  string
	Rule   string
	Reason string
	// More counts the further problems a schema check found (the first
	// is the one above).
	More int
}

func (e *Error) Error() string {
	s := e.Code + ": " + e.Field
	if e.Rule != "" {
		s += " (rule " + strconv.Quote(e.Rule) + ")"
	}
	s += ": " + e.Reason
	if e.More > 0 {
		s += " (and " + strconv.Itoa(e.More) + " more)"
	}
	return s
}

// Warrant is the error as the kernel's refusal type, for an entrance that
// answers every refusal as a *warrant.Error (code, field, rule).
func (e *Error) Warrant() *warrant.Error {
	rule := e.Reason
	if e.Rule != "" {
		rule += " (manifest rule " + strconv.Quote(e.Rule) + ")"
	}
	return &warrant.Error{Code: e.Code, Field: e.Field, Rule: rule}
}

func argErr(field, reason string) *Error {
	return &Error{Code: CodeInvalidArgument, Field: field, Reason: reason}
}

func limitErr(field, reason string) *Error {
	return &Error{Code: CodeLimitExceeded, Field: field, Reason: reason}
}

func manifestErr(field, reason string) *Error {
	return &Error{Code: CodeInvalidManifest, Field: field, Reason: reason}
}
