package grounding

import "errors"

// EWP-style codes for this package's errors, so every surface that reports
// them (ewp-ingest, the MCP tools) uses one vocabulary and a caller can
// branch on the code instead of parsing the message.
const (
	// CodeInvalidGraph: a graph document or a change breaks a graph rule
	// (GraphError; the message names the primitive, the depth and the rule).
	CodeInvalidGraph = "EWP_REFUSE_INVALID_GRAPH"
	// CodeCandidateInvalid: a learning candidate is malformed, out of scope
	// or its prerequisites are not met (CandidateValidationError).
	CodeCandidateInvalid = "EWP_REFUSE_CANDIDATE_INVALID"
	// CodeGapResolved: the gap already closed in the live graph; re-check
	// instead of retrying (GapResolvedError).
	CodeGapResolved = "EWP_GAP_ALREADY_RESOLVED"
	// CodeUnknownGap: a gap or candidate kind that is none of the four
	// (UnknownGapError).
	CodeUnknownGap = "EWP_REFUSE_UNKNOWN_GAP"
)

// ErrorCode returns the code of an error this package produced, or "" for
// any other error (which callers must treat as internal, not guess at).
func ErrorCode(err error) string {
	var (
		ge *GraphError
		ce *CandidateValidationError
		re *GapResolvedError
		ue *UnknownGapError
	)
	switch {
	case errors.As(err, &ge):
		return CodeInvalidGraph
	case errors.As(err, &ce):
		return CodeCandidateInvalid
	case errors.As(err, &re):
		return CodeGapResolved
	case errors.As(err, &ue):
		return CodeUnknownGap
	}
	return ""
}

// HasPrimitive reports whether a primitive with this name exists (folded
// lookup, no copy). With HasAppliesTo it lets a *Graph validate edge-policy
// placements directly.
func (g *Graph) HasPrimitive(name string) bool {
	_, ok := g.byFold[Fold(name)]
	return ok
}
