package grounding

// Document is a graph document, the ingest format of vre-pack/README.md:
//
//	{"graph": "filesystem", "description"?: "...", "provenance"?: "authored",
//	 "primitives": [
//	   {"name": "file", "provenance"?: "authored",
//	    "depths": [
//	      {"level": 0},
//	      {"level": 1, "properties": {...},
//	       "relata": [{"type": "REQUIRES", "target": "path", "target_depth": 1,
//	                   "metadata"?: {...}}]}]}]}
//
// Relata name their target; names resolve against the document and the
// graph it is applied to. The top-level "provenance" is the default for
// primitives that give none, and "authored" is the default of both.
type Document struct {
	Graph       string           `json:"graph"`
	Description string           `json:"description,omitempty"`
	Provenance  ProvenanceSource `json:"provenance,omitempty"`
	Primitives  []DocPrimitive   `json:"primitives"`
}

// DocPrimitive is one primitive of a document; depths are listed in
// ascending level.
type DocPrimitive struct {
	Name       string           `json:"name"`
	Provenance ProvenanceSource `json:"provenance,omitempty"`
	Depths     []DocDepth       `json:"depths"`
}

// DocDepth is one depth of a document primitive.
type DocDepth struct {
	Level      DepthLevel   `json:"level"`
	Properties JSONObject   `json:"properties,omitempty"`
	Relata     []DocRelatum `json:"relata,omitempty"`
}

// DocRelatum is an edge naming its target.
type DocRelatum struct {
	Type        RelationType `json:"type"`
	Target      string       `json:"target"`
	TargetDepth DepthLevel   `json:"target_depth"`
	Metadata    JSONObject   `json:"metadata,omitempty"`
}

// provenanceOf is the source a document primitive is stamped with.
func (d *Document) provenanceOf(p DocPrimitive) ProvenanceSource {
	switch {
	case p.Provenance != "":
		return p.Provenance
	case d.Provenance != "":
		return d.Provenance
	}
	return Authored
}
