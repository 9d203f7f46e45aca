package grounding

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ProposedDepth is one depth an agent proposes; relata and provenance are
// never part of a proposal (provenance is stamped by Learn).
type ProposedDepth struct {
	Level      DepthLevel `json:"level"`
	Properties JSONObject `json:"properties"`
}

// Candidate is a proposed fill for a gap (spec §4.1). Fields by Kind:
//
//	EXISTENCE     Name, D1
//	DEPTH         NewDepths (levels of the gapped primitive)
//	RELATIONAL    NewDepths (levels of the gap's target)
//	REACHABILITY  SourceName, TargetName, RelationType, SourceDepthLevel,
//	              TargetDepthLevel — all optional until Learn validates
//	              them; the integrator chooses the edge's direction.
type Candidate struct {
	Kind             GapKind
	Name             string
	D1               *ProposedDepth
	NewDepths        []ProposedDepth
	SourceName       string
	TargetName       string
	RelationType     RelationType
	SourceDepthLevel *DepthLevel
	TargetDepthLevel *DepthLevel
}

type wireCandidate struct {
	Kind             GapKind         `json:"kind"`
	Name             string          `json:"name,omitempty"`
	D1               *ProposedDepth  `json:"d1,omitempty"`
	NewDepths        []ProposedDepth `json:"new_depths,omitempty"`
	SourceName       *string         `json:"source_name,omitempty"`
	TargetName       *string         `json:"target_name,omitempty"`
	RelationType     *RelationType   `json:"relation_type,omitempty"`
	SourceDepthLevel *DepthLevel     `json:"source_depth_level,omitempty"`
	TargetDepthLevel *DepthLevel     `json:"target_depth_level,omitempty"`
}

// MarshalJSON writes the fields of c's kind; unset reachability fields are
// null and an empty proposal's properties are {} (the template shape an
// agent fills in).
func (c Candidate) MarshalJSON() ([]byte, error) {
	switch c.Kind {
	case ExistenceGap:
		return json.Marshal(struct {
			Kind GapKind        `json:"kind"`
			Name string         `json:"name"`
			D1   *ProposedDepth `json:"d1"`
		}{c.Kind, c.Name, c.D1})
	case DepthGap, RelationalGap:
		nd := c.NewDepths
		if nd == nil {
			nd = []ProposedDepth{}
		}
		return json.Marshal(struct {
			Kind      GapKind         `json:"kind"`
			NewDepths []ProposedDepth `json:"new_depths"`
		}{c.Kind, nd})
	case ReachabilityGap:
		return json.Marshal(struct {
			Kind             GapKind       `json:"kind"`
			SourceName       *string       `json:"source_name"`
			TargetName       *string       `json:"target_name"`
			RelationType     *RelationType `json:"relation_type"`
			SourceDepthLevel *DepthLevel   `json:"source_depth_level"`
			TargetDepthLevel *DepthLevel   `json:"target_depth_level"`
		}{c.Kind, nonEmpty(c.SourceName), nonEmpty(c.TargetName), nonEmptyType(c.RelationType), c.SourceDepthLevel, c.TargetDepthLevel})
	}
	return nil, &UnknownGapError{Kind: string(c.Kind)}
}

// MarshalJSON writes {} for absent properties.
func (p ProposedDepth) MarshalJSON() ([]byte, error) {
	type plain ProposedDepth
	c := plain(p)
	c.Properties = c.Properties.orEmpty()
	return json.Marshal(c)
}

// UnmarshalJSON reads a candidate sent by an agent. Unknown keys, unknown
// relation types and levels outside 0..4 are rejected here; everything
// else is Learn's to judge, so its errors keep the spec's wording.
func (c *Candidate) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w wireCandidate
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("candidate: %w", err)
	}
	switch w.Kind {
	case ExistenceGap, DepthGap, RelationalGap, ReachabilityGap:
	default:
		return &UnknownGapError{Kind: string(w.Kind)}
	}
	*c = Candidate{Kind: w.Kind, Name: w.Name, D1: w.D1, NewDepths: w.NewDepths,
		SourceName: deref(w.SourceName), TargetName: deref(w.TargetName),
		SourceDepthLevel: w.SourceDepthLevel, TargetDepthLevel: w.TargetDepthLevel}
	if w.RelationType != nil {
		c.RelationType = *w.RelationType
	}
	return nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonEmptyType(t RelationType) *RelationType {
	if t == "" {
		return nil
	}
	return &t
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TemplateFor pre-fills the candidate for gap (spec §4.1): the structure
// and levels are set, properties are left for the integrator to fill.
func TemplateFor(gap Gap) (Candidate, error) {
	switch gap.Kind {
	case ExistenceGap:
		return Candidate{Kind: ExistenceGap, Name: gap.Primitive, D1: &ProposedDepth{Level: Identity, Properties: JSONObject{}}}, nil
	case DepthGap, RelationalGap:
		nd := make([]ProposedDepth, len(gap.MissingLevels))
		for i, l := range gap.MissingLevels {
			nd[i] = ProposedDepth{Level: l, Properties: JSONObject{}}
		}
		return Candidate{Kind: gap.Kind, NewDepths: nd}, nil
	case ReachabilityGap:
		return Candidate{Kind: ReachabilityGap}, nil
	}
	return Candidate{}, &UnknownGapError{Kind: string(gap.Kind)}
}
