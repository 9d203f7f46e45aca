package grounding

import (
	"encoding/json"
	"slices"
)

// Relatum is a directed, typed edge stored on a Depth of its source; the
// holding depth's level is the edge's source depth (spec §1.4).
type Relatum struct {
	RelationType RelationType `json:"relation_type"`
	TargetID     string       `json:"target_id"`
	TargetDepth  DepthLevel   `json:"target_depth"`
	Metadata     JSONObject   `json:"metadata"`
	Provenance   Provenance   `json:"provenance"`
}

// Depth is one level of understanding of a primitive (spec §1.5).
type Depth struct {
	Level      DepthLevel `json:"level"`
	Properties JSONObject `json:"properties"`
	Relata     []Relatum  `json:"relata"`
	Provenance Provenance `json:"provenance"`
}

// Grounds is the vacuity rule (#80): D0 always counts; any other level
// counts only if it says something (a property or a relatum).
func (d Depth) Grounds() bool {
	return d.Level == Existence || len(d.Properties) > 0 || len(d.Relata) > 0
}

// Primitive is one revision of a concept (spec §1.6).
//
// Stored form (stable; the ledger keeps one payload per revision):
//
//	{"id": "<uuid>", "name": "<verbatim>",
//	 "depths": [{"level": 0..4, "properties": {...},
//	             "relata": [{"relation_type": "REQUIRES", "target_id": "<uuid>",
//	                         "target_depth": 0..4, "metadata": {...},
//	                         "provenance": P}],
//	             "provenance": P}],
//	 "provenance": P}
//	P = {"source": "authored"|"learned"|"synthetic",
//	     "created_at": RFC 3339 UTC, "updated_at": RFC 3339 UTC, "detail"?: "..."}
//
// properties, metadata and relata are always present ({} / []), so absent
// and empty never produce two encodings of one revision. Numbers inside
// properties and metadata survive a round trip exactly (see JSONObject).
// VRE's metrics are bookkeeping and are not part of the stored form.
type Primitive struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Depths     []Depth    `json:"depths"`
	Provenance Provenance `json:"provenance"`
}

// MarshalJSON writes the canonical stored form.
func (p Primitive) MarshalJSON() ([]byte, error) {
	type plain Primitive
	c := plain(p)
	if c.Depths == nil {
		c.Depths = []Depth{}
	}
	return json.Marshal(c)
}

// MarshalJSON writes {} and [] for absent properties and relata.
func (d Depth) MarshalJSON() ([]byte, error) {
	type plain Depth
	c := plain(d)
	c.Properties = c.Properties.orEmpty()
	if c.Relata == nil {
		c.Relata = []Relatum{}
	}
	return json.Marshal(c)
}

// MarshalJSON writes {} for absent metadata.
func (r Relatum) MarshalJSON() ([]byte, error) {
	type plain Relatum
	c := plain(r)
	c.Metadata = c.Metadata.orEmpty()
	return json.Marshal(c)
}

// GroundingLevels is the set of levels that count, as a bitmask (bit L set
// when level L grounds).
func (p Primitive) groundingMask() uint8 {
	var m uint8
	for _, d := range p.Depths {
		if d.Level.Valid() && d.Grounds() {
			m |= 1 << d.Level
		}
	}
	return m
}

// storedMask is every stored level, vacuous or not; learning validates
// fills against it (spec §4.2 "all stored levels").
func (p Primitive) storedMask() uint8 {
	var m uint8
	for _, d := range p.Depths {
		if d.Level.Valid() {
			m |= 1 << d.Level
		}
	}
	return m
}

// ContiguousMax is cmax: the highest level L such that 0..L all ground, or
// nil when D0 is missing (spec §1.6).
func (p Primitive) ContiguousMax() *DepthLevel {
	return levelPtr(contiguousMax(p.groundingMask()))
}

// contiguousMax walks 0,1,2,… and stops at the first absent level; -1
// stands for "none".
func contiguousMax(mask uint8) int {
	c := -1
	for l := 0; l <= int(MaxLevel); l++ {
		if mask&(1<<l) == 0 {
			break
		}
		c = l
	}
	return c
}

// missingLevels lists L in (floor, required] not in mask, ascending, where
// floor is current (-1 for none). Dormant levels above the chain that are
// present stay excluded (spec §1.6).
func missingLevels(mask uint8, current, required int) []DepthLevel {
	out := []DepthLevel{}
	for l := current + 1; l <= required && l <= int(MaxLevel); l++ {
		if mask&(1<<l) == 0 {
			out = append(out, DepthLevel(l))
		}
	}
	return out
}

// depthAt returns the index of the depth at level l, or -1.
func (p Primitive) depthAt(l DepthLevel) int {
	return slices.IndexFunc(p.Depths, func(d Depth) bool { return d.Level == l })
}

// Clone deep-copies p, so a caller can change the copy without touching a
// Graph snapshot.
func (p Primitive) Clone() Primitive {
	out := p
	out.Depths = make([]Depth, len(p.Depths))
	for i, d := range p.Depths {
		d.Properties = d.Properties.clone()
		rel := make([]Relatum, len(d.Relata))
		for j, r := range d.Relata {
			r.Metadata = r.Metadata.clone()
			rel[j] = r
		}
		d.Relata = rel
		out.Depths[i] = d
	}
	return out
}
