package warrant

import "github.com/ewp-go/ewp/warrant/internal/pyjson"

// fields holds the members of one JSON object that the decoder reads,
// gathered in a single pass. Looking each key up with a scan of the object
// cost more than everything else in decoding put together.
type fields struct {
	vals [numFields]pyjson.Value
	has  uint64
}

// Every member name the decoder reads, at any level of a view.
const (
	fPropositionID = iota
	fViewID
	fAssertions
	fEvidence
	fLineage
	fConflicts
	fChecks
	fOmittedSources
	fRetrievalScope
	fDegraded
	fFreshness
	fSubjects
	fAdapterMeta
	fEvaluatedAt
	fPolicyID
	fPolicyVersion
	fAssertionID
	fText
	fAssertedBy
	fConfidence
	fSource
	fAssertedAt
	fEvidenceID
	fPolarity
	fContent
	fObservedAt
	fCheckID
	fMethod
	fScope
	fResult
	fConflictID
	fStatus
	fPropositionIDs
	fNote
	fKind
	fFromID
	fToID
	fSourceID
	fLineageID
	fOriginType
	fOriginLocator
	fSnapshotID
	fContentHash
	fExtractorID
	fParentSourceID
	numFields
)

// fieldNames are the member names, by field index.
var fieldNames = [numFields]string{
	fPropositionID:  "proposition_id",
	fViewID:         "view_id",
	fAssertions:     "assertions",
	fEvidence:       "evidence",
	fLineage:        "lineage",
	fConflicts:      "conflicts",
	fChecks:         "checks",
	fOmittedSources: "omitted_sources",
	fRetrievalScope: "retrieval_scope",
	fDegraded:       "degraded",
	fFreshness:      "freshness_policy_seconds",
	fSubjects:       "subjects",
	fAdapterMeta:    "adapter_meta",
	fEvaluatedAt:    "evaluated_at",
	fPolicyID:       "policy_id",
	fPolicyVersion:  "policy_version",
	fAssertionID:    "assertion_id",
	fText:           "text",
	fAssertedBy:     "asserted_by",
	fConfidence:     "assertion_confidence",
	fSource:         "source",
	fAssertedAt:     "asserted_at",
	fEvidenceID:     "evidence_id",
	fPolarity:       "polarity",
	fContent:        "content",
	fObservedAt:     "observed_at",
	fCheckID:        "check_id",
	fMethod:         "method",
	fScope:          "scope",
	fResult:         "result",
	fConflictID:     "conflict_id",
	fStatus:         "status",
	fPropositionIDs: "proposition_ids",
	fNote:           "note",
	fKind:           "kind",
	fFromID:         "from_id",
	fToID:           "to_id",
	fSourceID:       "source_id",
	fLineageID:      "lineage_id",
	fOriginType:     "origin_type",
	fOriginLocator:  "origin_locator",
	fSnapshotID:     "snapshot_id",
	fContentHash:    "content_hash",
	fExtractorID:    "extractor_id",
	fParentSourceID: "parent_source_id",
}

// fieldTable maps fieldHash of each member name to its index (-1: none).
// The hash is chosen so that no two names collide; the table is checked
// when built, so adding a name that collides fails every test at once.
var fieldTable = func() (t [128]int8) {
	for i := range t {
		t[i] = -1
	}
	for i, name := range fieldNames {
		h := fieldHash(name)
		if t[h] >= 0 {
			panic("warrant: member names " + fieldNames[t[h]] + " and " + name + " collide in fieldHash")
		}
		t[h] = int8(i)
	}
	return t
}()

// fieldHash mixes a name's length, first and last bytes; with one lookup
// and one comparison it beats a switch over every name.
func fieldHash(key string) uint {
	return (2*uint(len(key)) + 19*uint(key[0]) + 52*uint(key[len(key)-1])) & 127
}

// fieldIndex returns the index of a member name, or -1 when no view
// field has it.
func fieldIndex(key string) int {
	if key == "" {
		return -1
	}
	if i := fieldTable[fieldHash(key)]; i >= 0 && fieldNames[i] == key {
		return int(i)
	}
	return -1
}

// scan gathers obj's members. A repeated key keeps its last value, as a
// Python dict does.
func (f *fields) scan(obj pyjson.Value) {
	it := obj.Iter()
	for {
		key, val, ok := it.Next()
		if !ok {
			return
		}
		if i := fieldIndex(key); i >= 0 {
			f.vals[i] = val
			f.has |= 1 << i
		}
	}
}

// Get returns the member named key and whether it was present.
func (f *fields) Get(key string) (pyjson.Value, bool) {
	i := fieldIndex(key)
	if i < 0 || f.has&(1<<i) == 0 {
		return pyjson.Value{}, false
	}
	return f.vals[i], true
}
