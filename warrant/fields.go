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

func fieldIndex(key string) int {
	switch key {
	case "proposition_id":
		return fPropositionID
	case "view_id":
		return fViewID
	case "assertions":
		return fAssertions
	case "evidence":
		return fEvidence
	case "lineage":
		return fLineage
	case "conflicts":
		return fConflicts
	case "checks":
		return fChecks
	case "omitted_sources":
		return fOmittedSources
	case "retrieval_scope":
		return fRetrievalScope
	case "degraded":
		return fDegraded
	case "freshness_policy_seconds":
		return fFreshness
	case "subjects":
		return fSubjects
	case "adapter_meta":
		return fAdapterMeta
	case "evaluated_at":
		return fEvaluatedAt
	case "policy_id":
		return fPolicyID
	case "policy_version":
		return fPolicyVersion
	case "assertion_id":
		return fAssertionID
	case "text":
		return fText
	case "asserted_by":
		return fAssertedBy
	case "assertion_confidence":
		return fConfidence
	case "source":
		return fSource
	case "asserted_at":
		return fAssertedAt
	case "evidence_id":
		return fEvidenceID
	case "polarity":
		return fPolarity
	case "content":
		return fContent
	case "observed_at":
		return fObservedAt
	case "check_id":
		return fCheckID
	case "method":
		return fMethod
	case "scope":
		return fScope
	case "result":
		return fResult
	case "conflict_id":
		return fConflictID
	case "status":
		return fStatus
	case "proposition_ids":
		return fPropositionIDs
	case "note":
		return fNote
	case "kind":
		return fKind
	case "from_id":
		return fFromID
	case "to_id":
		return fToID
	case "source_id":
		return fSourceID
	case "lineage_id":
		return fLineageID
	case "origin_type":
		return fOriginType
	case "origin_locator":
		return fOriginLocator
	case "snapshot_id":
		return fSnapshotID
	case "content_hash":
		return fContentHash
	case "extractor_id":
		return fExtractorID
	case "parent_source_id":
		return fParentSourceID
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
