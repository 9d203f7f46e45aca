package grounding

import (
	"fmt"
	"strings"
)

// Rules broken by a graph or a document; GraphError.Rule is one of these
// so callers can branch without parsing messages.
const (
	RuleSyntax          = "syntax"            // malformed JSON or a value of the wrong JSON type
	RuleUnknownField    = "unknown_field"     // a key the format does not define
	RuleMissingField    = "missing_field"     // a required key is absent or empty
	RuleRelationType    = "relation_type"     // not one of the five relation types
	RuleLevelRange      = "level_range"       // a level or target depth outside 0..4
	RuleDuplicateLevel  = "duplicate_level"   // two depths of one primitive share a level
	RuleLevelOrder      = "level_order"       // document depths not listed in ascending level
	RuleDuplicateName   = "duplicate_name"    // two primitives share a folded name
	RuleDuplicateID     = "duplicate_id"      // a deterministic id is taken by another name
	RuleInvalidID       = "invalid_id"        // a primitive id that is not a UUID
	RuleUnknownTarget   = "unknown_target"    // a relatum whose target does not exist
	RuleSelfReference   = "self_reference"    // a transitive relatum to its own source
	RuleCycle           = "transitive_cycle"  // transitive relata that loop
	RuleProvenance      = "provenance"        // a missing or unknown provenance source
	RuleSyntheticIngest = "synthetic_ingest"  // synthetic provenance is engine-only
	RuleEmptyName       = "empty_name"        // a primitive without a name
	RuleLevelMissing    = "level_missing"     // a depth without a level
	RuleTargetDepth     = "target_depth"      // a relatum without a target depth
	RuleTypeMissing     = "relation_missing"  // a relatum without a type
	RuleTargetMissing   = "target_missing"    // a relatum without a target
	RuleGraphNameAbsent = "graph_name_absent" // a document without a graph name
)

// GraphError is a rejected graph change or document. Path locates the
// offending value: "primitives[2].depths[1].relata[0]" for a document, or
// "[2].depths[1]" for the revisions passed to Apply. Depth is the level of
// the depth involved, or -1 when the problem is not about one depth.
type GraphError struct {
	Path      string
	Primitive string
	Depth     int
	Rule      string
	Detail    string

	rev int // index of the offending revision within an Apply batch
}

func (e *GraphError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	if e.Primitive != "" {
		fmt.Fprintf(&b, "primitive %q", e.Primitive)
		if e.Depth >= 0 {
			b.WriteString(" " + DepthLevel(e.Depth).String())
		}
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "%s (%s)", e.Detail, e.Rule)
	return b.String()
}

// GraphIntegrityError means the traversal handed the engine an edge whose
// source or target is not among the nodes: a backend bug, never a gap
// (spec §2.4).
type GraphIntegrityError struct {
	SourceID, TargetID string
	Missing            string // the id that is absent
}

func (e *GraphIntegrityError) Error() string {
	return fmt.Sprintf("graph integrity: edge %s -> %s references %s, which is not among the traversed nodes",
		e.SourceID, e.TargetID, e.Missing)
}

// CandidateValidationError rejects a learning candidate that is malformed,
// out of scope or whose prerequisites are not met (spec §4.2). Nothing is
// written.
type CandidateValidationError struct{ Msg string }

func (e *CandidateValidationError) Error() string { return e.Msg }

// GapResolvedError means the gap already closed in the live graph; the
// caller should re-check instead of retrying. Nothing is written.
type GapResolvedError struct{ Msg string }

func (e *GapResolvedError) Error() string { return e.Msg }

// UnknownGapError is returned for a gap whose kind is none of the four.
type UnknownGapError struct{ Kind string }

func (e *UnknownGapError) Error() string { return fmt.Sprintf("Unknown gap type: %q", e.Kind) }

func invalidCandidate(format string, args ...any) error {
	return &CandidateValidationError{Msg: fmt.Sprintf(format, args...)}
}

func gapResolved(format string, args ...any) error {
	return &GapResolvedError{Msg: fmt.Sprintf(format, args...)}
}
