package grounding

import (
	"fmt"

	"github.com/google/uuid"
)

// checkRevision applies the rules that need nothing but the revision
// itself. The returned error's Path is relative to the revision.
func checkRevision(p Primitive) *GraphError {
	fail := func(path string, depth int, rule, format string, args ...any) *GraphError {
		return &GraphError{Path: path, Primitive: p.Name, Depth: depth, Rule: rule, Detail: fmt.Sprintf(format, args...)}
	}
	// Only the canonical lowercase form: the id is a ledger key, and
	// uuid.Parse would also admit "{...}", "urn:uuid:..." and upper case.
	if u, err := uuid.Parse(p.ID); err != nil || u.String() != p.ID {
		return fail(".id", -1, RuleInvalidID, "id %q is not a canonical lowercase UUID", p.ID)
	}
	if p.Name == "" {
		return fail(".name", -1, RuleEmptyName, "name must not be empty")
	}
	if !p.Provenance.Source.Valid() {
		return fail(".provenance", -1, RuleProvenance, "provenance source %q is not authored, learned or synthetic", p.Provenance.Source)
	}
	prev := -1
	for di, d := range p.Depths {
		path := fmt.Sprintf(".depths[%d]", di)
		if err := checkDepthOrder(d.Level, prev); err != nil {
			err.Path, err.Primitive = path, p.Name
			return err
		}
		prev = int(d.Level)
		if !d.Provenance.Source.Valid() {
			return fail(path+".provenance", int(d.Level), RuleProvenance, "provenance source %q is not authored, learned or synthetic", d.Provenance.Source)
		}
		for ri, r := range d.Relata {
			if err := checkRelatum(p, r); err != nil {
				err.Path, err.Primitive, err.Depth = fmt.Sprintf("%s.relata[%d]", path, ri), p.Name, int(d.Level)
				return err
			}
		}
	}
	return nil
}

// checkDepthOrder enforces levels in 0..4, each once, ascending: one
// canonical stored order, so the engine never has to sort.
func checkDepthOrder(l DepthLevel, prev int) *GraphError {
	switch {
	case !l.Valid():
		return &GraphError{Depth: -1, Rule: RuleLevelRange, Detail: fmt.Sprintf("level %d is outside 0..4", int(l))}
	case int(l) == prev:
		return &GraphError{Depth: int(l), Rule: RuleDuplicateLevel, Detail: "level appears more than once"}
	case int(l) < prev:
		return &GraphError{Depth: int(l), Rule: RuleLevelOrder, Detail: fmt.Sprintf("depths must be listed in ascending level, but D%d follows D%d", l, prev)}
	}
	return nil
}

func checkRelatum(p Primitive, r Relatum) *GraphError {
	switch {
	case !r.RelationType.Valid():
		return &GraphError{Rule: RuleRelationType, Detail: fmt.Sprintf("unknown relation type %q", r.RelationType)}
	case !r.TargetDepth.Valid():
		return &GraphError{Rule: RuleLevelRange, Detail: fmt.Sprintf("target depth %d is outside 0..4", int(r.TargetDepth))}
	case !r.Provenance.Source.Valid():
		return &GraphError{Rule: RuleProvenance, Detail: fmt.Sprintf("relatum provenance source %q is not authored, learned or synthetic", r.Provenance.Source)}
	case r.TargetID == p.ID && r.RelationType.Transitive():
		return &GraphError{Rule: RuleSelfReference, Detail: fmt.Sprintf("%s relatum refers to the primitive itself", r.RelationType)}
	}
	return nil
}
