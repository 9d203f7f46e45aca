package warrant

import "fmt"

// Refusal codes. The kernel produces the first three; the rest belong to
// the ledger and the server but live here so every layer names them once.
const (
	CodeInvalidView        = "EWP_REFUSE_INVALID_EVIDENCE_VIEW"
	CodeUnknownPolicy      = "EWP_REFUSE_UNKNOWN_POLICY"
	CodeInvalidAction      = "EWP_REFUSE_INVALID_ACTION"
	CodeMissingEvaluatedAt = "EWP_MISSING_EVALUATED_AT"
	CodeMissingView        = "EWP_REFUSE_MISSING_VIEW"
	CodeImmutableRecord    = "EWP_REFUSE_IMMUTABLE_RECORD"
	CodePersistWarrant     = "EWP_REFUSE_PERSIST_WARRANT"
	CodeUnattestedTrusted  = "EWP_REFUSE_UNATTESTED_TRUSTED_ORIGIN"
	CodeMissingContentHash = "EWP_REFUSE_MISSING_CONTENT_HASH"
	CodeMissingObservedAt  = "EWP_REFUSE_MISSING_OBSERVED_AT"
	CodeIngestRole         = "EWP_REFUSE_INGEST_ROLE"
	CodeEvaluatedAtSkew    = "EWP_REFUSE_EVALUATED_AT_SKEW"
	CodeStaleViewForAction = "EWP_REFUSE_STALE_VIEW_FOR_ACTION"
	CodeClientRiskPolicy   = "EWP_REFUSE_CLIENT_RISK_POLICY"
	// CodeLimitExceeded refuses a view or request over a documented size
	// or work limit (see Limits); the message names the limit and how to
	// raise it.
	CodeLimitExceeded = "EWP_REFUSE_LIMIT_EXCEEDED"
	// CodeLoneSurrogate refuses an id or text holding a lone UTF-16
	// surrogate (e.g. "\ud800"): legal in the reference's JSON, but JSON
	// libraries on the way to and from an agent rewrite it to U+FFFD, so
	// the ledger and the server would answer for another proposition.
	CodeLoneSurrogate = "EWP_REFUSE_LONE_SURROGATE"
)

// Error is a refusal. Code is one of the EWP codes; Field is the JSON path
// of the offending value (e.g. "checks[2].result") and Rule says which
// rule it broke, so a person can fix the input without reading the spec.
type Error struct {
	Code  string
	Field string
	Rule  string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.Code, e.Rule)
	}
	return fmt.Sprintf("%s: %s: %s", e.Code, e.Field, e.Rule)
}

// Message is the human part of the error, without the code.
func (e *Error) Message() string {
	if e.Field == "" {
		return e.Rule
	}
	return e.Field + ": " + e.Rule
}

func invalid(field, rule string, args ...any) *Error {
	if len(args) > 0 {
		rule = fmt.Sprintf(rule, args...)
	}
	return &Error{Code: CodeInvalidView, Field: field, Rule: rule}
}
