package ingest

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// DecodeItem validates one view exactly as warrant_now would: the view
// through the kernel's decoder, a fixture document's policy identity and
// evaluated_at (a file that asks for an impossible evaluation is refused,
// not half-read), then the attestation of trusted origins. A refusal is a
// *warrant.Error.
func DecodeItem(raw []byte, attest bool) (*warrant.View, error) {
	doc, err := warrant.DecodeDocument(raw)
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

// decoded is one item's outcome.
type decoded struct {
	view *warrant.View
	err  *warrant.Error
}

// decodeAll decodes items on every core, keeping their order.
func decodeAll(items []Item, attest bool, progress func(done int)) []decoded {
	out := make([]decoded, len(items))
	var next, finished atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for k := int(next.Add(1) - 1); k < len(items); k = int(next.Add(1) - 1) {
				out[k] = decodeOne(items[k].Raw, attest)
				if n := finished.Add(1); n%1024 == 0 {
					progress(int(n))
				}
			}
		})
	}
	wg.Wait()
	return out
}

func decodeOne(raw []byte, attest bool) decoded {
	v, err := DecodeItem(raw, attest)
	if err == nil {
		return decoded{view: v}
	}
	var we *warrant.Error
	if !errors.As(err, &we) {
		we = &warrant.Error{Code: warrant.CodeInvalidView, Rule: err.Error()}
	}
	return decoded{err: we}
}
