package graphstore

import (
	"context"
	"fmt"

	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/ledger"
)

// IngestSummary says what a document ingest changed.
type IngestSummary struct {
	Graph      string `json:"graph"`
	Primitives int    `json:"primitives"` // in the document
	Added      int    `json:"added"`      // new primitives
	Revised    int    `json:"revised"`    // existing primitives given a new revision
	Unchanged  int    `json:"unchanged"`  // identical to their current revision
}

func (s IngestSummary) String() string {
	return fmt.Sprintf("%s: %d primitives (%d added, %d revised, %d unchanged)",
		s.Graph, s.Primitives, s.Added, s.Revised, s.Unchanged)
}

// Ingest applies a graph document: every primitive of it or none. The
// document is validated against the live graph inside the write
// transaction; errors are the grounding package's (*grounding.GraphError
// names the primitive, the depth and the rule) or the ledger's.
func (s *Store) Ingest(ctx context.Context, doc *grounding.Document) (IngestSummary, error) {
	sum := IngestSummary{Graph: doc.Graph, Primitives: len(doc.Primitives)}
	err := s.write(ctx, func(g *grounding.Graph) ([]grounding.Primitive, error) {
		_, revs, err := g.ApplyDocument(doc, s.now())
		if err != nil {
			return nil, err
		}
		sum.Added, sum.Revised = 0, 0 // the transaction may be retried
		for _, r := range revs {
			if _, ok := g.ByID(r.ID); ok {
				sum.Revised++
			} else {
				sum.Added++
			}
		}
		sum.Unchanged = sum.Primitives - len(revs)
		return revs, nil
	})
	return sum, err
}

// Learn writes the fill cand proposes for gap, stamped LEARNED at the
// store's clock, after validating it against the live graph inside the
// write transaction (so a gap closed a moment ago by another writer is
// reported as resolved, not filled twice). It returns the revisions
// written. Errors: *grounding.CandidateValidationError,
// *grounding.GapResolvedError, *grounding.GraphError, or the ledger's.
func (s *Store) Learn(ctx context.Context, gap grounding.Gap, cand grounding.Candidate) ([]grounding.Primitive, error) {
	var out []grounding.Primitive
	err := s.write(ctx, func(g *grounding.Graph) ([]grounding.Primitive, error) {
		revs, err := g.Learn(gap, cand, s.now())
		out = revs
		return revs, err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// write runs change against the graph the live rows make, inside the
// ledger's write transaction, and appends the revisions it returns.
// change must validate them (ApplyDocument and Learn both apply what they
// return to the graph they were given, which runs every graph rule).
func (s *Store) write(ctx context.Context, change func(*grounding.Graph) ([]grounding.Primitive, error)) error {
	return s.l.AppendPrimitives(ctx, func(cur []ledger.PrimitiveRow) ([]ledger.PrimitiveRow, error) {
		g, err := s.current(cur)
		if err != nil {
			return nil, err
		}
		revs, err := change(g)
		if err != nil {
			return nil, err
		}
		return Encode(revs)
	})
}
