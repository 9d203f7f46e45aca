// Package chain is the hash chain every EWP ledger store keeps, whatever
// the database: the canonical payload an event commits to for each kind of
// row, and the link hash = sha256(prev_hash ‖ payload). The SQLite ledger
// and the PostgreSQL ledger both build their events here, so a ledger
// copied from one store to the other, row for row, has the same chain head.
// It does no I/O.
package chain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Tables named by events.
const (
	TableSnapshots  = "snapshots"
	TablePrimitives = "primitive_revisions"
)

// Genesis is the prev_hash of the first event: 32 zero bytes. It returns
// a fresh slice, so no caller can change another's genesis.
func Genesis() []byte { return make([]byte, sha256.Size) }

// snapshotPayload is what the chain commits to for a snapshot row. Keys are
// declared in sorted order so the JSON is canonical; body and canonical
// form enter through their sha256, which keeps events small while any
// change of a stored byte still breaks the chain.
type snapshotPayload struct {
	BodySHA256      string `json:"body_sha256"`
	CanonicalSHA256 string `json:"canonical_sha256"`
	CreatedAt       string `json:"created_at"`
	PropositionID   string `json:"proposition_id"`
	Seq             int64  `json:"seq"`
	Table           string `json:"table"`
	ViewID          string `json:"view_id"`
}

// primitivePayload is what the chain commits to for a graph revision.
type primitivePayload struct {
	BodySHA256  string `json:"body_sha256"`
	CreatedAt   string `json:"created_at"`
	NameFold    string `json:"name_fold"`
	PrimitiveID string `json:"primitive_id"`
	Seq         int64  `json:"seq"`
	Table       string `json:"table"`
}

// SnapshotPayload is the payload of the event recording snapshot row seq.
// It takes the body's and canonical form's sha256 rather than the bytes,
// so a writer can hash on every core ahead of its transaction.
func SnapshotPayload(seq int64, prop, view string, bodySum, canonSum []byte, createdAt string) []byte {
	return mustJSON(snapshotPayload{
		BodySHA256: hex.EncodeToString(bodySum), CanonicalSHA256: hex.EncodeToString(canonSum), CreatedAt: createdAt,
		PropositionID: prop, Seq: seq, Table: TableSnapshots, ViewID: view,
	})
}

// PrimitivePayload is the payload of the event recording graph revision seq.
func PrimitivePayload(seq int64, id, nameFold string, body []byte, createdAt string) []byte {
	return mustJSON(primitivePayload{
		BodySHA256: hexSum(body), CreatedAt: createdAt, NameFold: nameFold,
		PrimitiveID: id, Seq: seq, Table: TablePrimitives,
	})
}

// Hash links an event to its predecessor: sha256(prev ‖ payload).
func Hash(prev, payload []byte) []byte {
	h := sha256.New()
	h.Write(prev)
	h.Write(payload)
	return h.Sum(nil)
}

// CheckLink checks one event against the one before it (want is the
// sequence number it must have, head that event's hash); "" when intact,
// else what is wrong. Both stores' Verify run it on every event, and the
// SQLite store's writers on the chain's tail before they append.
func CheckLink(seq, want int64, prev, head, hash []byte, payload string) string {
	switch {
	case seq != want:
		return fmt.Sprintf("event %d is missing (events jump from %d to %d)", want, want-1, seq)
	case !bytes.Equal(prev, head):
		return fmt.Sprintf("prev_hash does not match the hash of event %d", seq-1)
	case !bytes.Equal(hash, Hash(prev, []byte(payload))):
		return "hash is not sha256(prev_hash || payload): the event itself was edited"
	}
	return ""
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// mustJSON marshals structs of strings and ints, which cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// PayloadDiff names the fields in which a recorded payload and the one
// rebuilt from the row now differ, for a verifier's message; "" when they
// are equal.
func PayloadDiff(recorded string, now []byte) string {
	if recorded == string(now) {
		return ""
	}
	var a, b map[string]any
	if json.Unmarshal([]byte(recorded), &a) != nil || json.Unmarshal(now, &b) != nil {
		return "payload is not valid JSON"
	}
	var diffs []string
	for k := range b {
		if fmt.Sprint(a[k]) != fmt.Sprint(b[k]) {
			diffs = append(diffs, fmt.Sprintf("%s (event: %v, row now: %v)", k, a[k], b[k]))
		}
	}
	slices.Sort(diffs)
	if len(diffs) == 0 {
		return "payload text differs"
	}
	return strings.Join(diffs, "; ")
}

// Event is one link of a chain with the row it records, as a store lists
// it for a copy to another store: replaying the rows in order, with their
// created_at, rebuilds the same chain.
type Event struct {
	Seq       int64
	Table     string // TableSnapshots or TablePrimitives
	RowSeq    int64
	Hash      []byte
	CreatedAt string
	Body      []byte // the snapshot's stored form, or the revision's body
	// Snapshots only.
	PropositionID, ViewID string
	// Graph revisions only.
	PrimitiveID, NameFold string
}
