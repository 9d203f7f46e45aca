// Package ledgerstore serves the evidence ledger to the MCP server: it
// adapts *ledger.Ledger to mcp.Store. It translates two things: "no such
// snapshot" (warrant.CodeMissingView) into mcp.ErrNotFound, and a stored
// snapshot the kernel refuses into an internal failure (see damaged);
// roles, and so whether a write may happen at all, are the server's
// business.
package ledgerstore

import (
	"context"
	"errors"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// Store is a ledger as an mcp.Store.
type Store struct{ l *ledger.Ledger }

var _ mcp.Store = Store{}

// New serves l.
func New(l *ledger.Ledger) Store { return Store{l} }

// Ledger is the ledger served.
func (s Store) Ledger() *ledger.Ledger { return s.l }

func notFound(err error) error {
	var e *warrant.Error
	if errors.As(err, &e) && e.Code == warrant.CodeMissingView {
		return mcp.ErrNotFound
	}
	return stored(err)
}

// stored keeps the kernel's refusal of a stored snapshot from reaching the
// caller as a refusal of the caller's input. The ledger wraps in a
// *ledger.Error only its own failures, and the one kernel refusal among
// them is of a body it read back: the file was edited or written by a
// broken build, so the answer is EWP_INTERNAL_ERROR telling the operator
// to verify the ledger. A stored view over the server's decoding limits
// is the exception: nothing is damaged, the operator chose limits below
// what was ingested, so it stays a named refusal saying which limit.
func stored(err error) error {
	var le *ledger.Error
	var we *warrant.Error
	if !errors.As(err, &le) || !errors.As(le.Err, &we) {
		return err
	}
	if we.Code == warrant.CodeLimitExceeded {
		return &warrant.Error{Code: we.Code, Field: we.Field,
			Rule: "a stored snapshot is over the server's limits: " + we.Rule}
	}
	return &damagedError{err}
}

// damagedError is a stored snapshot the kernel refused. It deliberately
// does not unwrap: the refusal inside describes the file, not the call.
type damagedError struct{ err error }

func (e *damagedError) Error() string {
	return e.err.Error() + "; the ledger holds a snapshot this server cannot read back, which means the file was " +
		"changed outside the ledger: the operator should run `ewp-ingest verify --db PATH` on it"
}

// Latest is the proposition's latest snapshot.
func (s Store) Latest(ctx context.Context, prop string) (*warrant.View, error) {
	v, err := s.l.Latest(ctx, prop)
	return v, notFound(err)
}

// Get is one snapshot by view id.
func (s Store) Get(ctx context.Context, prop, viewID string) (*warrant.View, error) {
	v, err := s.l.Get(ctx, prop, viewID)
	return v, notFound(err)
}

// List lists propositions matching query.
func (s Store) List(ctx context.Context, query string, limit int) ([]mcp.PropositionSummary, error) {
	rows, err := s.l.List(ctx, query, limit)
	if err != nil {
		return nil, stored(err)
	}
	out := make([]mcp.PropositionSummary, len(rows))
	for i, r := range rows {
		out[i] = mcp.PropositionSummary{PropositionID: r.PropositionID, LatestViewID: r.LatestViewID, Texts: r.Texts}
	}
	return out, nil
}

// Put stores one view; it reports whether the view was new.
func (s Store) Put(ctx context.Context, v *warrant.View) (bool, error) {
	res, err := s.l.Put(ctx, []*warrant.View{v})
	if err != nil {
		var be *ledger.BatchError
		if errors.As(err, &be) {
			return false, stored(be.Unwrap())
		}
		return false, stored(err)
	}
	return res.Stored == 1, nil
}

// AppendEvidence stores latest + the evidence (and its assertion).
func (s Store) AppendEvidence(ctx context.Context, prop string, in mcp.EvidenceInput) (*warrant.View, error) {
	recs := snapshot.Records{Evidence: []warrant.Evidence{in.Evidence}}
	if in.Assertion != nil {
		recs.Assertions = []warrant.Assertion{*in.Assertion}
	}
	res, err := s.l.Append(ctx, prop, recs)
	return res.View, notFound(err)
}

// AppendCheck stores latest + the check.
func (s Store) AppendCheck(ctx context.Context, prop string, in mcp.CheckInput) (*warrant.View, error) {
	res, err := s.l.AppendCheck(ctx, prop, in.Check)
	return res.View, notFound(err)
}
