package mcp

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/ewp-go/ewp/grounding"
)

// Gaps and candidates are decoded here, field by field, rather than by the
// grounding package's UnmarshalJSON: every malformed value is refused with
// the path of the argument at fault (gap.required_depth, candidate.d1), and
// a key that belongs to another kind is refused instead of ignored.

var gapKinds = []string{string(grounding.ExistenceGap), string(grounding.DepthGap),
	string(grounding.RelationalGap), string(grounding.ReachabilityGap)}

// gapKeys are the keys of each gap kind ("message" is output only; it is
// accepted so a gap can be sent back exactly as check_grounding gave it).
var gapKeys = map[grounding.GapKind][]string{
	grounding.ExistenceGap:    {"kind", "primitive", "message"},
	grounding.ReachabilityGap: {"kind", "primitive", "message"},
	grounding.DepthGap:        {"kind", "primitive", "required_depth", "current_depth", "missing_levels", "message"},
	grounding.RelationalGap:   {"kind", "source", "target", "required_depth", "current_depth", "missing_levels", "message"},
}

var candidateKeys = map[grounding.GapKind][]string{
	grounding.ExistenceGap:    {"kind", "name", "d1"},
	grounding.DepthGap:        {"kind", "new_depths"},
	grounding.RelationalGap:   {"kind", "new_depths"},
	grounding.ReachabilityGap: {"kind", "source_name", "target_name", "relation_type", "source_depth_level", "target_depth_level"},
}

var allGapKeys = []string{"kind", "primitive", "source", "target", "required_depth", "current_depth", "missing_levels", "message"}

var allCandidateKeys = []string{"kind", "name", "d1", "new_depths", "source_name", "target_name",
	"relation_type", "source_depth_level", "target_depth_level"}

// kindOfObject reads the required "kind" of a gap or candidate and refuses
// keys that no kind, then keys that this kind, does not have.
func kindOfObject(obj args, field string, all []string, byKind map[grounding.GapKind][]string) (grounding.GapKind, error) {
	if err := obj.only(field, all); err != nil {
		return "", err
	}
	k, ok, err := obj.str(field, "kind")
	if err == nil && !ok {
		err = badArg(field+".kind", "is required: one of %v", gapKinds)
	}
	if err == nil && !slices.Contains(gapKinds, k) {
		err = badArg(field+".kind", "must be one of %v; got %q", gapKinds, k)
	}
	if err != nil {
		return "", err
	}
	kind := grounding.GapKind(k)
	return kind, obj.only(field, byKind[kind])
}

// requiredObject reads a required object argument.
func requiredObject(a args, name, hint string) (args, error) {
	obj, ok, err := a.object("", name)
	if err == nil && !ok {
		err = badArg(name, "is required: %s", hint)
	}
	return obj, err
}

// decodeGap reads a gap as check_grounding returns it. The message is
// re-rendered from the fields, never taken from the caller.
func decodeGap(a args) (grounding.Gap, error) {
	obj, err := requiredObject(a, "gap", "a gap exactly as check_grounding returned it")
	if err != nil {
		return grounding.Gap{}, err
	}
	kind, err := kindOfObject(obj, "gap", allGapKeys, gapKeys)
	if err != nil {
		return grounding.Gap{}, err
	}
	g := grounding.Gap{Kind: kind}
	switch kind {
	case grounding.ExistenceGap, grounding.ReachabilityGap:
		g.Primitive, err = requiredName(obj, "gap", "primitive")
	case grounding.DepthGap:
		if g.Primitive, err = requiredName(obj, "gap", "primitive"); err == nil {
			err = gapLevels(obj, &g)
		}
	case grounding.RelationalGap:
		err = relationalGap(obj, &g)
	}
	if err != nil {
		return grounding.Gap{}, err
	}
	g.Message = g.Render()
	return g, nil
}

func relationalGap(obj args, g *grounding.Gap) error {
	var err error
	if g.Source, err = requiredName(obj, "gap", "source"); err != nil {
		return err
	}
	if g.Target, err = requiredName(obj, "gap", "target"); err != nil {
		return err
	}
	return gapLevels(obj, g)
}

// gapLevels reads required_depth (required), current_depth (null or
// missing: none) and missing_levels.
func gapLevels(obj args, g *grounding.Gap) error {
	req, err := level(obj, "gap", "required_depth")
	if err == nil && req == nil {
		err = badArg("gap.required_depth", "is required for a %s gap: an integer from 0 to 4", g.Kind)
	}
	if err != nil {
		return err
	}
	g.RequiredDepth = *req
	if g.CurrentDepth, err = level(obj, "gap", "current_depth"); err != nil {
		return err
	}
	g.MissingLevels, err = levelList(obj, "gap", "missing_levels")
	return err
}

func levelList(obj args, field, name string) ([]grounding.DepthLevel, error) {
	raw, ok := obj[name]
	if !ok {
		return nil, nil
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, badArg(join(field, name), "must be a list of depth levels (integers 0 to 4); got %s", kindOf(raw))
	}
	out := make([]grounding.DepthLevel, 0, len(items))
	for i, item := range items {
		l, err := level(args{"x": item}, "", "x")
		if err != nil || l == nil {
			return nil, badArg(join(field, name)+"["+strconv.Itoa(i)+"]", "must be an integer from 0 to 4; got %s", describe(item))
		}
		out = append(out, *l)
	}
	return out, nil
}

// requiredName reads a concept name: a non-empty JSON string.
func requiredName(obj args, field, name string) (string, error) {
	s, ok, err := optionalName(obj, field, name)
	if err == nil && !ok {
		err = badArg(join(field, name), "is required (a concept name)")
	}
	return s, err
}

func optionalName(obj args, field, name string) (string, bool, error) {
	s, ok, err := obj.str(field, name)
	if err == nil && ok && s == "" {
		err = badArg(join(field, name), "must be a non-empty concept name")
	}
	return s, ok, err
}

// decodeCandidate reads a filled-in template. Whether it fits the gap is
// grounding.Learn's to judge, so those refusals keep the spec's wording.
func decodeCandidate(a args) (grounding.Candidate, error) {
	obj, err := requiredObject(a, "candidate", "the template gap_template returned, with its properties filled in")
	if err != nil {
		return grounding.Candidate{}, err
	}
	kind, err := kindOfObject(obj, "candidate", allCandidateKeys, candidateKeys)
	if err != nil {
		return grounding.Candidate{}, err
	}
	c := grounding.Candidate{Kind: kind}
	switch kind {
	case grounding.ExistenceGap:
		err = existenceCandidate(obj, &c)
	case grounding.DepthGap, grounding.RelationalGap:
		c.NewDepths, err = proposedDepths(obj)
	case grounding.ReachabilityGap:
		err = reachabilityCandidate(obj, &c)
	}
	return c, err
}

func existenceCandidate(obj args, c *grounding.Candidate) error {
	var err error
	if c.Name, _, err = optionalName(obj, "candidate", "name"); err != nil {
		return err
	}
	d1, ok, err := obj.object("candidate", "d1")
	if err != nil || !ok {
		return err
	}
	pd, err := proposedDepth(d1, "candidate.d1")
	c.D1 = &pd
	return err
}

func proposedDepths(obj args) ([]grounding.ProposedDepth, error) {
	raw, ok := obj["new_depths"]
	if !ok {
		return nil, nil
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, badArg("candidate.new_depths", "must be a list of {level, properties}; got %s", kindOf(raw))
	}
	out := make([]grounding.ProposedDepth, 0, len(items))
	for i, item := range items {
		field := "candidate.new_depths[" + strconv.Itoa(i) + "]"
		d, err := decodeObject(field, item)
		if err != nil {
			return nil, err
		}
		pd, err := proposedDepth(d, field)
		if err != nil {
			return nil, err
		}
		out = append(out, pd)
	}
	return out, nil
}

// proposedDepth reads {level, properties}. Relata and provenance are never
// part of a proposal: edges are learned through REACHABILITY gaps, and
// provenance is stamped by the server.
func proposedDepth(d args, field string) (grounding.ProposedDepth, error) {
	if err := d.only(field, []string{"level", "properties"}); err != nil {
		return grounding.ProposedDepth{}, err
	}
	l, err := level(d, field, "level")
	if err == nil && l == nil {
		err = badArg(field+".level", "is required: an integer from 0 to 4")
	}
	if err != nil {
		return grounding.ProposedDepth{}, err
	}
	pd := grounding.ProposedDepth{Level: *l, Properties: grounding.JSONObject{}}
	if raw, ok := d["properties"]; ok {
		if raw[0] != '{' {
			return pd, badArg(field+".properties", "must be a JSON object of what you know at this level; got %s", kindOf(raw))
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&pd.Properties); err != nil {
			return pd, badArg(field+".properties", "is not a JSON object: %v", err)
		}
	}
	return pd, nil
}

func reachabilityCandidate(obj args, c *grounding.Candidate) error {
	var err error
	if c.SourceName, _, err = optionalName(obj, "candidate", "source_name"); err != nil {
		return err
	}
	if c.TargetName, _, err = optionalName(obj, "candidate", "target_name"); err != nil {
		return err
	}
	rt, ok, err := obj.str("candidate", "relation_type")
	if err == nil && ok && !grounding.RelationType(rt).Valid() {
		err = badArg("candidate.relation_type", "must be one of %v; got %q", relationTypes, rt)
	}
	if err != nil {
		return err
	}
	c.RelationType = grounding.RelationType(rt)
	if c.SourceDepthLevel, err = level(obj, "candidate", "source_depth_level"); err != nil {
		return err
	}
	c.TargetDepthLevel, err = level(obj, "candidate", "target_depth_level")
	return err
}

var relationTypes = []string{string(grounding.AppliesTo), string(grounding.Requires),
	string(grounding.ConstrainedBy), string(grounding.DependsOn), string(grounding.Includes)}
