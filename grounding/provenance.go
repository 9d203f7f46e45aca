package grounding

import (
	"encoding/json"
	"fmt"
	"time"
)

// ProvenanceSource says who produced a piece of the graph (spec §1.3).
type ProvenanceSource string

// The three provenance sources.
const (
	Authored  ProvenanceSource = "authored"  // a human wrote it
	Learned   ProvenanceSource = "learned"   // an agent proposed it, a human approved it
	Synthetic ProvenanceSource = "synthetic" // the engine made it (transient placeholders only)
)

// Valid reports whether s is one of the three sources.
func (s ProvenanceSource) Valid() bool {
	return s == Authored || s == Learned || s == Synthetic
}

// UnmarshalJSON rejects unknown sources (the removed "conversational" too).
func (s *ProvenanceSource) UnmarshalJSON(data []byte) error {
	var v string
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("provenance source must be a string, got %s", data)
	}
	if !ProvenanceSource(v).Valid() {
		return fmt.Errorf("unknown provenance source %q", v)
	}
	*s = ProvenanceSource(v)
	return nil
}

// Provenance is mandatory on every primitive, depth and relatum. Times are
// UTC; stamp normalizes them so the stored JSON does not depend on the
// caller's time zone.
type Provenance struct {
	Source    ProvenanceSource `json:"source"`
	CreatedAt time.Time        `json:"created_at"`
	UpdatedAt time.Time        `json:"updated_at"`
	Detail    string           `json:"detail,omitempty"`
}

// stamp is a fresh provenance created and updated at now.
func stamp(src ProvenanceSource, now time.Time) Provenance {
	now = now.UTC()
	return Provenance{Source: src, CreatedAt: now, UpdatedAt: now}
}
