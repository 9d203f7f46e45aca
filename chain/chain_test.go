package chain

import (
	"bytes"
	"crypto/sha256"
	"testing"
)

// The payload text is the chain's contract between stores and releases:
// any change to it changes every chain head, so it is spelled out here.
func TestPayloadText(t *testing.T) {
	sum := bytes.Repeat([]byte{0xab}, 32)
	got := string(SnapshotPayload(7, "P-1", "v-1", sum, sum[:2], "2026-09-21T12:00:00Z"))
	want := `{"body_sha256":"` + string(bytes.Repeat([]byte("ab"), 32)) + `","canonical_sha256":"abab","created_at":"2026-09-21T12:00:00Z","proposition_id":"P-1","seq":7,"table":"snapshots","view_id":"v-1"}`
	if got != want {
		t.Fatalf("snapshot payload\n got %s\nwant %s", got, want)
	}
	got = string(PrimitivePayload(3, "p", "file", []byte("{}"), "t"))
	want = `{"body_sha256":"44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","created_at":"t","name_fold":"file","primitive_id":"p","seq":3,"table":"primitive_revisions"}`
	if got != want {
		t.Fatalf("primitive payload\n got %s\nwant %s", got, want)
	}
}

func TestHashLinks(t *testing.T) {
	g := Genesis()
	if len(g) != 32 || !bytes.Equal(g, make([]byte, 32)) {
		t.Fatalf("genesis %x", g)
	}
	g[0] = 1
	if Genesis()[0] != 0 {
		t.Fatal("Genesis shares its slice")
	}
	want := sha256.Sum256([]byte("prevpayload"))
	if !bytes.Equal(Hash([]byte("prev"), []byte("payload")), want[:]) {
		t.Fatal("Hash is not sha256(prev || payload)")
	}
}
