package grounding

import (
	"encoding/json"
	"fmt"
)

// DecodeDocument parses and validates a graph document on its own: JSON
// shape, unknown or missing fields, relation types, levels in 0..4 listed
// once each in ascending order, names unique after folding, no transitive
// self-reference or cycle among the document's primitives. Errors are
// *GraphError with a JSON path such as "primitives[2].depths[1].relata[0]".
// A relatum may name a primitive outside the document; ApplyDocument
// resolves it against the graph and reports it there if it is unknown.
func DecodeDocument(data []byte) (*Document, error) {
	doc, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(); err != nil {
		return nil, err
	}
	return doc, nil
}

func parseDocument(data []byte) (*Document, *GraphError) {
	top, err := object(data, "", "graph", "description", "provenance", "primitives")
	if err != nil {
		return nil, err
	}
	doc := &Document{}
	if err := optString(top, "", "graph", &doc.Graph); err != nil {
		return nil, err
	}
	if err := optString(top, "", "description", &doc.Description); err != nil {
		return nil, err
	}
	if doc.Provenance, err = optProvenance(top, "", ""); err != nil {
		return nil, err
	}
	items, err := array(top, "", "primitives", true)
	if err != nil {
		return nil, err
	}
	for i, raw := range items {
		p, err := parsePrimitive(raw, fmt.Sprintf("primitives[%d]", i))
		if err != nil {
			return nil, err
		}
		doc.Primitives = append(doc.Primitives, p)
	}
	return doc, nil
}

func parsePrimitive(raw json.RawMessage, path string) (DocPrimitive, *GraphError) {
	var p DocPrimitive
	m, err := object(raw, path, "name", "provenance", "depths")
	if err != nil {
		return p, err
	}
	if _, ok := m["name"]; !ok {
		return p, fieldError(path+".name", "", -1, RuleMissingField, "name is required")
	}
	if err := optString(m, path, "name", &p.Name); err != nil {
		return p, err
	}
	if p.Provenance, err = optProvenance(m, path, p.Name); err != nil {
		return p, err
	}
	items, err := array(m, path, "depths", false)
	if err != nil {
		err.Primitive = p.Name
		return p, err
	}
	for j, raw := range items {
		d, err := parseDepth(raw, fmt.Sprintf("%s.depths[%d]", path, j), p.Name)
		if err != nil {
			return p, err
		}
		p.Depths = append(p.Depths, d)
	}
	return p, nil
}

func parseDepth(raw json.RawMessage, path, name string) (DocDepth, *GraphError) {
	d, haveLevel, err := parseDepthFields(raw, path)
	if err != nil {
		err.Primitive = name
		if haveLevel {
			err.Depth = int(d.Level)
		}
	}
	return d, err
}

// parseDepthFields reports whether the level was read, so errors after it
// can name the depth.
func parseDepthFields(raw json.RawMessage, path string) (DocDepth, bool, *GraphError) {
	var d DocDepth
	m, err := object(raw, path, "level", "properties", "relata")
	if err != nil {
		return d, false, err
	}
	if d.Level, err = levelField(m, path, "level", RuleLevelMissing); err != nil {
		return d, false, err
	}
	if err := optObject(m, path, "properties", &d.Properties); err != nil {
		return d, true, err
	}
	items, err := array(m, path, "relata", false)
	if err != nil {
		return d, true, err
	}
	for k, raw := range items {
		r, err := parseRelatum(raw, fmt.Sprintf("%s.relata[%d]", path, k))
		if err != nil {
			return d, true, err
		}
		d.Relata = append(d.Relata, r)
	}
	return d, true, nil
}

func parseRelatum(raw json.RawMessage, path string) (DocRelatum, *GraphError) {
	var r DocRelatum
	m, err := object(raw, path, "type", "target", "target_depth", "metadata")
	if err != nil {
		return r, err
	}
	var typ string
	if _, ok := m["type"]; !ok {
		return r, fieldError(path+".type", "", -1, RuleTypeMissing, "relatum type is required")
	}
	if err := optString(m, path, "type", &typ); err != nil {
		return r, err
	}
	if r.Type = RelationType(typ); !r.Type.Valid() {
		return r, fieldError(path+".type", "", -1, RuleRelationType, "unknown relation type %q", typ)
	}
	if _, ok := m["target"]; !ok {
		return r, fieldError(path+".target", "", -1, RuleTargetMissing, "relatum target is required")
	}
	if err := optString(m, path, "target", &r.Target); err != nil {
		return r, err
	}
	if r.TargetDepth, err = levelField(m, path, "target_depth", RuleTargetDepth); err != nil {
		return r, err
	}
	return r, optObject(m, path, "metadata", &r.Metadata)
}
