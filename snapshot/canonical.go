package snapshot

import (
	"bytes"
	"crypto/sha256"

	"github.com/ewp-go/ewp/warrant"
)

// CanonicalSum is sha256(warrant.Canonical(v)) computed from the stored
// form, which is the canonical form with "adapter_meta" spliced in first
// and "view_id" appended last (keys sorted): hashing the middle of the
// body saves serialising every view twice on a large load. When the body
// does not have that shape it falls back to Canonical; a test holds the
// two equal over the pack, the corpus and synthetic views, and the stores'
// Verify recompute the canonical form from scratch. Every store keeps it
// as canonical_sha256.
func CanonicalSum(body []byte, v *warrant.View) [32]byte {
	prefix := `{"adapter_meta": ` + v.AdapterMeta + `, `
	tail := bytes.LastIndex(body, []byte(`, "view_id": `))
	if !bytes.HasPrefix(body, []byte(prefix)) || tail < len(prefix) {
		return sha256.Sum256(warrant.Canonical(v))
	}
	h := sha256.New()
	h.Write([]byte("{"))
	h.Write(body[len(prefix):tail])
	h.Write([]byte("}"))
	var out [32]byte
	h.Sum(out[:0])
	return out
}
