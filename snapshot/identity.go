package snapshot

import (
	"crypto/sha256"
	"fmt"

	"github.com/ewp-go/ewp/warrant"
)

// Stored is what a store remembers about one identified thing of a
// proposition: the sum it was first stored with and the view that stored it.
type Stored struct {
	Sum    Sum
	ViewID string
}

// Lookup answers "what was stored under this key for this proposition".
// A store implements it over its own index so that an identity check never
// has to reload the proposition's history.
type Lookup interface {
	Lookup(k Key) (Stored, bool)
}

// Map is an in-memory Lookup for one proposition.
type Map map[Key]Stored

// Lookup implements [Lookup].
func (m Map) Lookup(k Key) (Stored, bool) {
	s, ok := m[k]
	return s, ok
}

// Add records the fingerprints of a stored view. Keys already present keep
// their first view: after a successful [Check] their sums are equal anyway.
func (m Map) Add(viewID string, fps []Fingerprint) {
	for _, f := range fps {
		if _, ok := m[f.Key]; !ok {
			m[f.Key] = Stored{Sum: f.Sum, ViewID: viewID}
		}
	}
}

// Check refuses v when one of its records reuses an id that the
// proposition's history (seen through idx) holds with different content.
// It returns the fingerprints of v so the caller can index them after it
// has stored v.
func Check(idx Lookup, v *warrant.View) ([]Fingerprint, error) {
	fps := Fingerprints(v)
	if err := CheckFingerprints(idx, fps); err != nil {
		return nil, err
	}
	return fps, nil
}

// CheckFingerprints is Check for a store that has already computed the
// fingerprints (for instance in parallel, ahead of its write transaction).
func CheckFingerprints(idx Lookup, fps []Fingerprint) error {
	for _, f := range fps {
		if err := checkOne(idx, f); err != nil {
			return err
		}
	}
	return nil
}

func checkOne(idx Lookup, f Fingerprint) error {
	old, ok := idx.Lookup(f.Key)
	if !ok || old.Sum == f.Sum {
		return nil
	}
	return &warrant.Error{Code: warrant.CodeImmutableRecord, Field: f.Field, Rule: immutableRule(f.Key, old.ViewID)}
}

func immutableRule(k Key, viewID string) string {
	switch k.Kind {
	case KindSource:
		return fmt.Sprintf("source_id %q was stored with a different SourceRef in view %q; a source_id names one source forever, so give this source a new source_id", k.ID, viewID)
	case KindConflict:
		return fmt.Sprintf("conflict id %q was stored with different proposition_ids in view %q; a conflict's participants are fixed (only status and note may change), so record the wider conflict under a new conflict_id", k.ID, viewID)
	default:
		return fmt.Sprintf("%s id %q was stored with different content in view %q; records are immutable, so give the changed %s a new id", k.Kind, k.ID, viewID, k.Kind)
	}
}

// StoredSum is the identity of a snapshot: the sha256 of its stored form
// warrant.Encode(v), which includes view_id and adapter_meta, because a
// stored snapshot must read back exactly as it was stored.
func StoredSum(v *warrant.View) Sum {
	return sha256.Sum256(warrant.Encode(v))
}

// CheckSnapshot decides a put under an existing (proposition_id, view_id):
// nil means the new view is identical to the stored one (a no-op), an
// error with CodeImmutableRecord means it differs.
func CheckSnapshot(existing Sum, v *warrant.View) error {
	if StoredSum(v) == existing {
		return nil
	}
	return ImmutableSnapshot(v.PropositionID, v.ViewID)
}

// ImmutableSnapshot is the refusal for a different snapshot under an
// existing (proposition_id, view_id).
func ImmutableSnapshot(propositionID, viewID string) *warrant.Error {
	return &warrant.Error{Code: warrant.CodeImmutableRecord, Field: "view_id",
		Rule: fmt.Sprintf("proposition %q already has a different snapshot stored as view_id %q; snapshots are immutable, so store the new evidence under a new view_id (or omit view_id to derive one from the content)", propositionID, viewID)}
}
