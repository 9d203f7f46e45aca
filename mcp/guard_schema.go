package mcp

import "github.com/ewp-go/ewp/edgepolicy"

// Schemas of the grounding guard's tools and may_act fields. Like the rest
// they describe every parameter, nested ones included; the server still
// checks every argument itself.

func levelParam(desc string) schema { return integer(desc, 0, 4) }

func nullableLevel(desc string) schema {
	return schema{"type": []string{"integer", "null"}, "minimum": 0, "maximum": 4, "description": desc}
}

func levelListSchema(desc string) schema { return array(desc, levelParam("A depth level.")) }

var gapKindParam = enum("EXISTENCE (unknown concept), DEPTH (a concept known too shallowly), RELATIONAL "+
	"(an edge's target too shallow), REACHABILITY (a concept not connected to the others).", gapKinds...)

// gapProps are a gap's fields; which ones a kind has is said per field.
func gapProps() schema {
	return schema{
		"kind":           gapKindParam,
		"primitive":      nonEmpty("EXISTENCE, DEPTH, REACHABILITY: the concept the gap is about (stored name; for EXISTENCE the spelling you sent)."),
		"source":         nonEmpty("RELATIONAL: the edge's source concept."),
		"target":         nonEmpty("RELATIONAL: the edge's target concept, the one that is too shallow."),
		"required_depth": levelParam("DEPTH, RELATIONAL: the depth level required (0 EXISTENCE … 4 IMPLICATIONS)."),
		"current_depth":  nullableLevel("DEPTH, RELATIONAL: the contiguous depth known now; null when not even D0."),
		"missing_levels": levelListSchema("DEPTH, RELATIONAL: the levels to fill, ascending."),
		"message":        str("One-line human rendering of the gap (ignored when sent back; re-rendered)."),
	}
}

func gapInput(desc string) schema { return object(desc, gapProps(), "kind") }

func gapOutput() schema {
	return object("A reason the concepts are not grounded. Fields by kind: EXISTENCE and REACHABILITY: primitive; "+
		"DEPTH: primitive, required_depth, current_depth, missing_levels; RELATIONAL: source, target, required_depth, "+
		"current_depth, missing_levels (of the target).", gapProps(), "kind", "message")
}

func proposedDepthSchema(desc string) schema {
	return object(desc, schema{
		"level":      levelParam("The depth level this proposal fills."),
		"properties": schema{"type": "object", "description": "What is known about the concept at this level, e.g. {\"description\": \"...\"}. Must not be empty: an empty depth does not count toward grounding."},
	}, "level")
}

func candidateProps() schema {
	return schema{
		"kind":               gapKindParam,
		"name":               nonEmpty("EXISTENCE: the concept's name; must match the gap's primitive (case-insensitively)."),
		"d1":                 proposedDepthSchema("EXISTENCE: the concept's D1 IDENTITY (level 1)."),
		"new_depths":         array("DEPTH, RELATIONAL: the missing levels, filled; no level above required_depth, none already present.", proposedDepthSchema("One proposed depth.")),
		"source_name":        nonEmpty("REACHABILITY: the new edge's source concept; one end must be the gap's primitive."),
		"target_name":        nonEmpty("REACHABILITY: the new edge's target concept."),
		"relation_type":      enum("REACHABILITY: the new edge's type.", relationTypes...),
		"source_depth_level": levelParam("REACHABILITY: the source depth the edge is stored on; the source must be grounded that deep."),
		"target_depth_level": levelParam("REACHABILITY: the depth the target must have; the target must be grounded that deep."),
	}
}

func candidateInput() schema {
	return object("A filled-in gap_template: the proposed fill for the gap. Provenance is stamped by the server (learned).",
		candidateProps(), "kind")
}

// candidateOutput is the template shape: reachability fields start null.
func candidateOutput() schema {
	props := candidateProps()
	for _, k := range []string{"source_name", "target_name", "relation_type"} {
		props[k] = nullableStr(props[k].(schema)["description"].(string))
	}
	for _, k := range []string{"source_depth_level", "target_depth_level"} {
		props[k] = nullableLevel(props[k].(schema)["description"].(string))
	}
	return object("The template: the gap's structure pre-filled, every properties object empty for you to fill.", props, "kind")
}

func stepSchema() schema {
	return object("One visible edge of the justified frontier.", schema{
		"source":        str("Source concept."),
		"target":        str("Target concept."),
		"relation_type": enum("Edge type.", relationTypes...),
		"source_depth":  levelParam("The source depth the edge is stored on."),
		"target_depth":  levelParam("The depth the edge requires of its target."),
	}, "source", "target", "relation_type", "source_depth", "target_depth")
}

func traceSchema() schema {
	relatum := object("An edge that stays inside the frontier.", schema{
		"relation_type": enum("Edge type.", relationTypes...),
		"target":        str("Target concept."),
		"target_id":     str("Target id."),
		"target_depth":  levelParam("The depth the edge requires of its target."),
	}, "relation_type", "target", "target_id", "target_depth")
	depth := object("A depth the concept is contiguously grounded to.", schema{
		"level":      levelParam("Depth level."),
		"properties": schema{"type": "object", "description": "What is known at this level."},
		"relata":     array("Edges stored on this depth.", relatum),
	}, "level", "properties", "relata")
	prim := object("A concept of the frontier, trimmed to its contiguous depths.", schema{
		"id":     str("Stable id (unknown concepts get one derived from the name)."),
		"name":   str("Stored name, or the spelling sent for an unknown concept."),
		"depths": array("Depths up to the contiguous maximum.", depth),
	}, "id", "name", "depths")
	return object("The epistemic trace: what the answer rests on.", schema{
		"query": object("The query.", schema{"concept_ids": idList("Root ids, de-duplicated, in input order.")}, "concept_ids"),
		"result": object("The justified frontier.", schema{
			"primitives": array("Concepts reached from the roots over visible edges.", prim),
			"pathway":    array("Visible edges of the frontier, in graph order.", stepSchema()),
		}, "primitives", "pathway"),
	}, "query", "result")
}

func checkGroundingOutput() schema {
	return object("The grounding check (GROUNDING.md §2).", schema{
		"grounded":      boolean("True when there are no gaps. An empty query is never grounded."),
		"resolved":      idList("Each input concept, in order, as the stored name (or as sent when unknown)."),
		"gaps":          array("Why not grounded, in phase order: EXISTENCE, DEPTH, RELATIONAL, REACHABILITY.", gapOutput()),
		"trace":         traceSchema(),
		"graph_version": schema{"type": "integer", "description": "The concept-graph version the check ran on."},
	}, "grounded", "resolved", "gaps", "trace", "graph_version")
}

// guardActionProps are the action fields the guard layers add to may_act.
func guardActionProps() schema {
	return schema{
		"concepts": stringList("The concepts the action touches, e.g. [\"delete\", \"file\"] (exact names, case-insensitive). " +
			"With concepts, the grounding layer denies unless all are grounded and edge policies are evaluated on the trace."),
		"cardinality": enum("Whether the action touches one thing or several. Omit when unknown: every policy then applies.",
			edgepolicy.CardinalitySingle, edgepolicy.CardinalityMultiple),
		"tool_name": nonEmpty("The tool you are about to call; policies see it as the Cedar action. Without it every policy on the trace fires."),
		"arguments": schema{"type": "object", "description": "The arguments you will pass to that tool; policies read them as context.arguments."},
		"min_depth": levelParam("Optional: require every named concept to be grounded at least this deep (0–4)."),
	}
}
