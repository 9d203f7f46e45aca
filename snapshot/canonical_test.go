package snapshot_test

import (
	"crypto/sha256"
	"testing"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// TestCanonicalSumMatchesKernel holds the shortcut in CanonicalSum to the
// kernel's Canonical. The ingest round-trip tests cover the pack and the
// corpus through Put; this covers odd adapter_meta and ids directly.
func TestCanonicalSumMatchesKernel(t *testing.T) {
	docs := [][]byte{
		[]byte(`{"proposition_id": "P", "adapter_meta": {"view_id": ", \"view_id\": ", "x": [1, {"a": null}]}, "view_id": "v, \"view_id\": 1"}`),
		[]byte(`{"proposition_id": "P\u00e9\n", "adapter_meta": {}}`),
		[]byte(`{"proposition_id": "P", "view_id": 7}`),
	}
	for i := range 50 {
		docs = append(docs, snapshottest.SyntheticView(i, i%5))
	}
	for _, d := range docs {
		v, err := warrant.DecodeView(d)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if got, want := snapshot.CanonicalSum(warrant.Encode(v), v), sha256.Sum256(warrant.Canonical(v)); got != want {
			t.Errorf("%s: CanonicalSum differs from sha256(Canonical)", d)
		}
	}
}
