package sqlite

import (
	"encoding/json"

	"github.com/ewp-go/ewp/chain"
)

// The payloads and the link hash are package chain's, shared by every
// store so that a ledger copied between stores keeps its chain head.

// genesis is the prev_hash of the first event.
var genesis = chain.Genesis()

const (
	tableSnapshots  = chain.TableSnapshots
	tablePrimitives = chain.TablePrimitives
)

var (
	snapshotEvent  = chain.SnapshotPayload
	primitiveEvent = chain.PrimitivePayload
	chainHash      = chain.Hash
	payloadDiff    = chain.PayloadDiff
	checkLink      = chain.CheckLink
)

// mustJSON marshals values that cannot fail to marshal (the search index
// rows written in one statement).
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
