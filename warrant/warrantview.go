package warrant

// Protocol and policy identity.
const (
	ProtocolVersion = "EWP-0.2.0"
	PolicyID        = "reference-v2"
	PolicyVersion   = "reference-v2"
)

// Axis values.
const (
	Accepted   = "ACCEPTED"
	Tentative  = "TENTATIVE"
	Unaccepted = "UNACCEPTED"

	ConflictOpen     = "OPEN"
	ConflictResolved = "RESOLVED"
	ConflictNone     = "NONE"

	VerHuman    = "HUMAN"
	VerExternal = "EXTERNAL"
	VerIndirect = "INDIRECT"
	VerNone     = "NONE"

	Current    = "CURRENT"
	Stale      = "STALE"
	Superseded = "SUPERSEDED"

	Sufficient   = "SUFFICIENT"
	Insufficient = "INSUFFICIENT"
	Degraded     = "DEGRADED"
)

// Axes are the five normative warrant axes plus the reference's
// non-normative diagnostics (strength, rationale codes).
type Axes struct {
	Acceptance     string   `json:"acceptance"`
	Conflict       string   `json:"conflict"`
	Verification   string   `json:"verification"`
	Currency       string   `json:"currency"`
	Sufficiency    string   `json:"sufficiency"`
	Strength       float64  `json:"strength"`
	RationaleCodes []string `json:"rationale_codes"`
}

// WarrantView is the output of Evaluate: the normative part (§6) and the
// reference's diagnostics under the same names, so goldens compare.
type WarrantView struct {
	ProtocolVersion string `json:"protocol_version"`
	PropositionID   string `json:"proposition_id"`
	ViewID          string `json:"view_id"`
	PolicyID        string `json:"policy_id"`
	PolicyVersion   string `json:"policy_version"`
	EvaluatedAt     string `json:"evaluated_at"`
	Warrant         Axes   `json:"warrant"`

	SupportingEvidenceIDs   []string `json:"supporting_evidence_ids"`
	OpposingEvidenceIDs     []string `json:"opposing_evidence_ids"`
	IndependentLineageCount int      `json:"independent_lineage_count"`
	Checks                  []string `json:"checks"`
	FreshestCheck           *string  `json:"freshest_check"`
	Stale                   bool     `json:"stale"`
	OpenConflicts           []string `json:"open_conflicts"`
	ResolvedConflicts       []string `json:"resolved_conflicts"`
	OmittedSources          []string `json:"omitted_sources"`
	DerivedFrom             []string `json:"derived_from"`
	Supersedes              []string `json:"supersedes"`
	SupersededBy            []string `json:"superseded_by"`
	FalsificationConditions []string `json:"falsification_conditions"`
}
