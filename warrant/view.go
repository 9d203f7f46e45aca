// Package warrant is the EWP-0.2.0 kernel: it decodes an EvidenceView with
// the reference's rules, validates it, and evaluates the five warrant axes
// under policy reference-v2 at an instant T. It is pure: no I/O, no clock,
// no mutable globals. Everything that touches the outside world lives in
// ledger/, mcp/ and cmd/.
package warrant

// View is a decoded, validated EvidenceView. Every field holds its value
// after the reference's defaults and scalar normalisation, so two inputs
// that the reference treats alike decode to equal Views.
type View struct {
	PropositionID string
	// ViewID is the id as given, or the content-derived id of §8 when the
	// input had none. ViewIDDerived tells which.
	ViewID        string
	ViewIDDerived bool

	Assertions     []Assertion
	Evidence       []Evidence
	Lineage        []LineageEdge
	Conflicts      []Conflict
	Checks         []Check
	OmittedSources []string
	RetrievalScope string
	Degraded       bool
	Freshness      int64 // freshness_policy_seconds
	Subjects       []string
	// AdapterMeta is the adapter_meta object as raw JSON text. It never
	// affects the axes or the derived view id.
	AdapterMeta string
}

// SourceRef says where a record came from.
type SourceRef struct {
	SourceID      string
	LineageID     string
	OriginType    string
	OriginLocator string
	SnapshotID    string
	ContentHash   string
	ObservedAt    string
	// ExtractorID and ParentSourceID are optional; nil is JSON null.
	ExtractorID    *string
	ParentSourceID *string
}

// Assertion is a claim that the proposition holds. It carries no polarity.
type Assertion struct {
	AssertionID string
	Text        string
	AssertedBy  string
	// Confidence is read with float(), as the reference does: 1 and 1.0
	// are the same confidence.
	Confidence    float64
	Source        SourceRef
	AssertedAt    string
	PropositionID string
}

// Evidence is an observation for or against the proposition.
type Evidence struct {
	EvidenceID    string
	Polarity      string // supports | opposes
	Source        SourceRef
	Content       string
	ObservedAt    string
	PropositionID string
}

// Check is a verification of the proposition by some method.
type Check struct {
	CheckID    string
	Method     string
	Scope      string
	Source     SourceRef
	ObservedAt string
	Result     string // supports | opposes | inconclusive
	Subjects   []string
}

// Conflict is an explicit conflict row. Its participants are fixed; its
// status and note may change between snapshots.
type Conflict struct {
	ConflictID     string
	Status         string // open | resolved
	PropositionIDs []string
	Note           string
}

// LineageEdge relates two ids. Lineage has no time and always applies.
type LineageEdge struct {
	Kind   string // derived_from | supersedes | superseded_by | parent_source
	FromID string
	ToID   string
}

// Enum values of the closed enums.
const (
	Supports       = "supports"
	Opposes        = "opposes"
	Inconclusive   = "inconclusive"
	StatusOpen     = "open"
	StatusResolved = "resolved"

	KindDerivedFrom  = "derived_from"
	KindSupersedes   = "supersedes"
	KindSupersededBy = "superseded_by"
	KindParentSource = "parent_source"
)

// Defaults of the optional view fields (§2).
const (
	DefaultFreshness      = 2592000
	DefaultRetrievalScope = "complete"
	// MaxFreshness is 2^53-1, the largest freshness the protocol accepts.
	MaxFreshness = 1<<53 - 1
)
