package edgepolicy

import (
	"fmt"
	"strings"
)

// Graph is what placement validation needs from the concept graph.
type Graph interface {
	// HasPrimitive reports whether a primitive with this name exists
	// (fold-insensitive lookup).
	HasPrimitive(name string) bool
	// HasAppliesTo reports whether source has an APPLIES_TO relatum to
	// target stored on its depth whose level equals sourceDepth exactly.
	HasAppliesTo(source, target string, sourceDepth int) bool
}

// Orphan reasons; each orphan carries exactly one, checked in this order.
const (
	ReasonSourceNotFound = "source primitive not found"
	ReasonTargetNotFound = "target primitive not found"
	ReasonNoEdge         = "no APPLIES_TO edge at this source depth"
)

// Orphan is a policy placed on an edge the graph does not have. Such a
// policy could never fire, which almost always means a typo or a graph that
// moved on; the server refuses to start rather than run with a dead policy.
type Orphan struct {
	PolicyID    string
	Position    string // file:line:column of the policy
	Source      string
	Target      string
	SourceDepth int
	Reason      string
}

// String renders the orphan as "name (id): src->tgt @ D# NAME [reason]",
// where the name is the policy's position in its file: Cedar policies have
// no other name, and the position is what the operator needs to fix it.
func (o Orphan) String() string {
	return fmt.Sprintf("%s (%s): %s->%s @ %s [%s]",
		o.Position, o.PolicyID, o.Source, o.Target, DepthLabel(o.SourceDepth), o.Reason)
}

// Validate checks every placement against the graph and returns the orphans
// in file order; an empty result means every policy sits on a real edge.
func (s *Set) Validate(g Graph) []Orphan {
	var out []Orphan
	for _, p := range s.policies {
		reason := orphanReason(g, p)
		if reason == "" {
			continue
		}
		out = append(out, Orphan{PolicyID: p.id, Position: p.position, Source: p.source,
			Target: p.target, SourceDepth: p.depth, Reason: reason})
	}
	return out
}

func orphanReason(g Graph, p *policy) string {
	switch {
	case !g.HasPrimitive(p.source):
		return ReasonSourceNotFound
	case !g.HasPrimitive(p.target):
		return ReasonTargetNotFound
	case !g.HasAppliesTo(p.source, p.target, p.depth):
		return ReasonNoEdge
	}
	return ""
}

// FormatOrphans lists the orphans one per line, for the start-up error.
func FormatOrphans(orphans []Orphan) string {
	lines := make([]string, len(orphans))
	for i, o := range orphans {
		lines[i] = o.String()
	}
	return strings.Join(lines, "\n")
}
