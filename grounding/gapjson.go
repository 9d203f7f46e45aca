package grounding

import (
	"encoding/json"
	"fmt"
)

// Wire shapes, one per kind, so each kind marshals exactly its fields and
// a DEPTH gap always carries current_depth (null for none).
type (
	wirePrimitiveGap struct {
		Kind      GapKind `json:"kind"`
		Primitive string  `json:"primitive"`
		Message   string  `json:"message"`
	}
	wireDepthGap struct {
		Kind          GapKind      `json:"kind"`
		Primitive     string       `json:"primitive"`
		RequiredDepth DepthLevel   `json:"required_depth"`
		CurrentDepth  *DepthLevel  `json:"current_depth"`
		MissingLevels []DepthLevel `json:"missing_levels"`
		Message       string       `json:"message"`
	}
	wireRelationalGap struct {
		Kind          GapKind      `json:"kind"`
		Source        string       `json:"source"`
		Target        string       `json:"target"`
		RequiredDepth DepthLevel   `json:"required_depth"`
		CurrentDepth  *DepthLevel  `json:"current_depth"`
		MissingLevels []DepthLevel `json:"missing_levels"`
		Message       string       `json:"message"`
	}
)

// MarshalJSON writes the vre-pack shape of g's kind plus "message".
func (g Gap) MarshalJSON() ([]byte, error) {
	msg := g.Message
	if msg == "" {
		msg = g.Render()
	}
	missing := g.MissingLevels
	if missing == nil {
		missing = []DepthLevel{}
	}
	switch g.Kind {
	case ExistenceGap, ReachabilityGap:
		return json.Marshal(wirePrimitiveGap{g.Kind, g.Primitive, msg})
	case DepthGap:
		return json.Marshal(wireDepthGap{g.Kind, g.Primitive, g.RequiredDepth, g.CurrentDepth, missing, msg})
	case RelationalGap:
		return json.Marshal(wireRelationalGap{g.Kind, g.Source, g.Target, g.RequiredDepth, g.CurrentDepth, missing, msg})
	}
	return nil, &UnknownGapError{Kind: string(g.Kind)}
}

// UnmarshalJSON reads a gap an agent sends back (learn_gap, gap_template).
// Names and required_depth are mandatory for the kinds that have them;
// levels must be in 0..4; message and missing_levels are optional and a
// missing message is re-rendered.
func (g *Gap) UnmarshalJSON(data []byte) error {
	var w struct {
		Kind          GapKind      `json:"kind"`
		Primitive     string       `json:"primitive"`
		Source        string       `json:"source"`
		Target        string       `json:"target"`
		RequiredDepth *DepthLevel  `json:"required_depth"`
		CurrentDepth  *DepthLevel  `json:"current_depth"`
		MissingLevels []DepthLevel `json:"missing_levels"`
		Message       string       `json:"message"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("gap: %w", err)
	}
	out := Gap{Kind: w.Kind, Primitive: w.Primitive, Source: w.Source, Target: w.Target,
		CurrentDepth: w.CurrentDepth, MissingLevels: w.MissingLevels, Message: w.Message}
	if err := requireGapFields(&out, w.RequiredDepth); err != nil {
		return err
	}
	if out.Message == "" {
		out.Message = out.Render()
	}
	*g = out
	return nil
}

func requireGapFields(g *Gap, required *DepthLevel) error {
	switch g.Kind {
	case ExistenceGap, ReachabilityGap:
		if g.Primitive == "" {
			return fmt.Errorf("gap: %s gap needs \"primitive\"", g.Kind)
		}
		return nil
	case DepthGap:
		if g.Primitive == "" {
			return fmt.Errorf("gap: DEPTH gap needs \"primitive\"")
		}
	case RelationalGap:
		if g.Source == "" || g.Target == "" {
			return fmt.Errorf("gap: RELATIONAL gap needs \"source\" and \"target\"")
		}
	default:
		return &UnknownGapError{Kind: string(g.Kind)}
	}
	if required == nil {
		return fmt.Errorf("gap: %s gap needs \"required_depth\"", g.Kind)
	}
	g.RequiredDepth = *required
	return nil
}
