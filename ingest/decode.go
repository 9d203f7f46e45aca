package ingest

import (
	"bytes"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// DecodeItem validates one view exactly as warrant_now would: the view
// through the kernel's decoder, a fixture document's policy identity and
// evaluated_at (a file that asks for an impossible evaluation is refused,
// not half-read), then the attestation of trusted origins. A refusal is a
// *warrant.Error.
func DecodeItem(raw []byte, attest bool) (*warrant.View, error) {
	return decodeWith(&warrant.Decoder{}, raw, attest)
}

// decodeWith is DecodeItem with the given decoder (and its limits).
func decodeWith(d *warrant.Decoder, raw []byte, attest bool) (*warrant.View, error) {
	doc, err := d.DecodeDocument(raw)
	if err != nil {
		return nil, err
	}
	if hasEvaluatedAt(raw) {
		if _, err := warrant.Evaluate(doc.View, doc.EvaluatedAt); err != nil {
			return nil, err
		}
	}
	if err := snapshot.RequireAttestation(doc.View, attest); err != nil {
		return nil, err
	}
	return doc.View, nil
}

// hasEvaluatedAt reports a non-null top-level evaluated_at. A plain view
// has none; its presence makes the item a fixture-format document whose T
// must be a parseable instant.
func hasEvaluatedAt(raw []byte) bool {
	if !bytes.Contains(raw, []byte(`"evaluated_at"`)) {
		return false
	}
	keys, err := topLevel(raw)
	if err != nil {
		return false // the kernel has already accepted raw; unreachable
	}
	m, ok := keys["evaluated_at"]
	return ok && string(m.raw) != "null"
}
