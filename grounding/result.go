package grounding

// Result is the answer to Check (spec §1.9 GroundingResult, in the JSON
// shape of vre-pack/README.md). agent_id is stamped by the server, not
// here.
type Result struct {
	Grounded bool     `json:"grounded"`
	Resolved []string `json:"resolved"`
	Gaps     []Gap    `json:"gaps"`
	Trace    Trace    `json:"trace"`
}

// Trace is the epistemic response: the query's root ids and the justified
// frontier. It is never null, even for an empty query (spec §2.1).
type Trace struct {
	Query  TraceQuery  `json:"query"`
	Result TraceResult `json:"result"`
}

// TraceQuery holds the root ids in de-duplicated input order; transient
// roots carry a stable id derived from their folded name.
type TraceQuery struct {
	ConceptIDs []string `json:"concept_ids"`
}

// TraceResult is the frontier: primitives trimmed to their contiguous
// chain, and the visible frontier edges.
type TraceResult struct {
	Primitives []TracePrimitive `json:"primitives"`
	Pathway    []Step           `json:"pathway"`
}

// TracePrimitive is a frontier primitive as shipped to the agent: only the
// depths up to its contiguous max, only relata that stay in the frontier.
type TracePrimitive struct {
	ID     string       `json:"id"`
	Name   string       `json:"name"`
	Depths []TraceDepth `json:"depths"`
}

// TraceDepth is one shipped depth.
type TraceDepth struct {
	Level      DepthLevel     `json:"level"`
	Properties JSONObject     `json:"properties"`
	Relata     []TraceRelatum `json:"relata"`
}

// TraceRelatum names its target as well as identifying it.
type TraceRelatum struct {
	RelationType RelationType `json:"relation_type"`
	Target       string       `json:"target"`
	TargetID     string       `json:"target_id"`
	TargetDepth  DepthLevel   `json:"target_depth"`
}

// Step is one visible frontier edge, by name (spec §1.4 EpistemicStep).
type Step struct {
	Source       string       `json:"source"`
	Target       string       `json:"target"`
	RelationType RelationType `json:"relation_type"`
	SourceDepth  DepthLevel   `json:"source_depth"`
	TargetDepth  DepthLevel   `json:"target_depth"`
}

// Edge is an APPLIES_TO edge of a trace: the unit an edge policy is placed
// on (source and target by stored name, exact source depth).
type Edge struct {
	Source      string `json:"source"`
	Target      string `json:"target"`
	SourceDepth int    `json:"source_depth"`
	TargetDepth int    `json:"target_depth"`
}

// AppliesToEdges lists the APPLIES_TO edges of the trace in the order the
// policy gate walks them (spec §3.4): trace primitives, their depths, their
// relata. The trace is already trimmed, so every edge is visible and both
// ends are in the frontier.
func (t Trace) AppliesToEdges() []Edge {
	out := []Edge{}
	for _, p := range t.Result.Primitives {
		for _, d := range p.Depths {
			for _, r := range d.Relata {
				if r.RelationType == AppliesTo {
					out = append(out, Edge{Source: p.Name, Target: r.Target, SourceDepth: int(d.Level), TargetDepth: int(r.TargetDepth)})
				}
			}
		}
	}
	return out
}

// AppliesToEdges is Trace.AppliesToEdges of r's trace. A policy layer
// should only consult it when r.Grounded (spec §3.3).
func (r Result) AppliesToEdges() []Edge { return r.Trace.AppliesToEdges() }

// emptyResult is the answer to an empty query (spec §2.1): not grounded,
// no gaps, and an empty (not null) trace.
func emptyResult() Result {
	return Result{
		Resolved: []string{},
		Gaps:     []Gap{},
		Trace: Trace{
			Query:  TraceQuery{ConceptIDs: []string{}},
			Result: TraceResult{Primitives: []TracePrimitive{}, Pathway: []Step{}},
		},
	}
}
