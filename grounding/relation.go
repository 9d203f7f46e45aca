package grounding

import (
	"encoding/json"
	"fmt"
)

// RelationType is the type of a directed edge (spec §1.2).
type RelationType string

// The five relation types.
const (
	AppliesTo     RelationType = "APPLIES_TO"
	Requires      RelationType = "REQUIRES"
	ConstrainedBy RelationType = "CONSTRAINED_BY"
	DependsOn     RelationType = "DEPENDS_ON"
	Includes      RelationType = "INCLUDES"
)

// Valid reports whether t is one of the five types.
func (t RelationType) Valid() bool {
	switch t {
	case AppliesTo, Requires, ConstrainedBy, DependsOn, Includes:
		return true
	}
	return false
}

// Transitive types pull their targets into the closure and must stay
// acyclic; APPLIES_TO and INCLUDES only connect nodes already present.
func (t RelationType) Transitive() bool {
	return t == Requires || t == ConstrainedBy || t == DependsOn
}

// UnmarshalJSON rejects unknown types at the boundary.
func (t *RelationType) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("relation type must be a string, got %s", data)
	}
	if !RelationType(s).Valid() {
		return fmt.Errorf("unknown relation type %q", s)
	}
	*t = RelationType(s)
	return nil
}
