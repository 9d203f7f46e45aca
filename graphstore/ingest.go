package graphstore

import (
	"context"
	"errors"
	"time"

	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/warrant"
)

// LoadDocument is ewp-ingest's graph loader (an ingest.GraphLoader): it
// decodes a graph document ({"graph": ..., "primitives": [...]}) and
// stores it whole or not at all. A document the grounding rules refuse
// comes back as a *warrant.Error with code grounding.CodeInvalidGraph,
// whose message names the JSON path, the primitive, the depth and the rule;
// ledger failures are returned unchanged.
func LoadDocument(ctx context.Context, l Ledger, raw []byte) (string, error) {
	doc, err := grounding.DecodeDocument(raw)
	if err != nil {
		return "", refusal(err)
	}
	sum, err := New(l, time.Now).Ingest(ctx, doc)
	if err != nil {
		return "", refusal(err)
	}
	return sum.String(), nil
}

// refusal gives a grounding error its EWP code; anything else (the
// ledger failing) stays as it is, so the caller can tell the two apart.
func refusal(err error) error {
	code := grounding.ErrorCode(err)
	if code == "" {
		return err
	}
	rule := err.Error()
	var ge *grounding.GraphError
	if errors.As(err, &ge) && ge.Rule == grounding.RuleUnknownTarget {
		rule += "; add the target to the document or ingest the document that defines it first"
	}
	return &warrant.Error{Code: code, Rule: rule}
}
