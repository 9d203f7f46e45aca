// Package ledgerstore serves the evidence ledger to the MCP server: it
// adapts a ledger — ledger/sqlite's or ledger/postgres's — to
// mcp.Store. It translates three things: "no such snapshot"
// (warrant.CodeMissingView) into mcp.ErrNotFound, a stored snapshot the
// kernel refuses into an internal failure (see damaged), and, when told
// how to recognise one, an unreachable database into
// mcp.ErrStoreUnavailable; roles, and so whether a write may happen at
// all, are the server's business.
package ledgerstore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// Ledger is what the server needs of a ledger; both stores have it.
type Ledger interface {
	Latest(ctx context.Context, propositionID string) (*warrant.View, error)
	Get(ctx context.Context, propositionID, viewID string) (*warrant.View, error)
	List(ctx context.Context, query string, limit int) ([]ledger.PropositionSummary, error)
	Put(ctx context.Context, views []*warrant.View) (ledger.PutResult, error)
	Append(ctx context.Context, propositionID string, r snapshot.Records) (ledger.AppendResult, error)
	AppendCheck(ctx context.Context, propositionID string, c warrant.Check) (ledger.AppendResult, error)
}

// HashedLedger is a Ledger that reads a snapshot together with its
// stored canonical_sha256. Both stores are (store.Ledger); a Ledger
// without it (a wrapper that routes reads) is served all the same, and
// the server then computes the hashes it records (see
// mcp.HashedStore).
type HashedLedger interface {
	LatestHashed(ctx context.Context, propositionID string) (*warrant.View, [32]byte, error)
}

// Store is a ledger as an mcp.Store.
type Store struct {
	l   Ledger
	opt Options
}

var _ mcp.HashedStore = Store{}

// Options are for a ledger in a database server (ledger/postgres).
type Options struct {
	// Primary, when set, answers the reads an action rests on
	// (mcp.IsActionRead: may_act's latest snapshot) while the ledger
	// given to NewWith is a standby that may lag: an action never rests
	// on a snapshot older than the primary's latest.
	Primary Ledger
	// Unavailable, when set, tells a failure that is the database being
	// unreachable; it reaches the server as mcp.ErrStoreUnavailable
	// (EWP_STORE_UNAVAILABLE) instead of an internal failure.
	Unavailable func(error) bool
}

// New serves l.
func New(l Ledger) Store { return Store{l: l} }

// NewWith serves l with opt.
func NewWith(l Ledger, opt Options) Store { return Store{l: l, opt: opt} }

// Ledger is the ledger served.
func (s Store) Ledger() Ledger { return s.l }

func (s Store) notFound(err error) error {
	var e *warrant.Error
	if errors.As(err, &e) && e.Code == warrant.CodeMissingView {
		return mcp.ErrNotFound
	}
	return s.stored(err)
}

// stored is the package's stored with the unavailable rule first.
func (s Store) stored(err error) error {
	if err != nil && s.opt.Unavailable != nil && s.opt.Unavailable(err) {
		return fmt.Errorf("%w: %w", mcp.ErrStoreUnavailable, err)
	}
	return stored(err)
}

// reader is the ledger a Latest reads: the primary for an action.
func (s Store) reader(ctx context.Context) Ledger {
	if s.opt.Primary != nil && mcp.IsActionRead(ctx) {
		return s.opt.Primary
	}
	return s.l
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
	v, err := s.reader(ctx).Latest(ctx, prop)
	return v, s.notFound(err)
}

// Get is one snapshot by view id.
func (s Store) Get(ctx context.Context, prop, viewID string) (*warrant.View, error) {
	v, err := s.l.Get(ctx, prop, viewID)
	return v, s.notFound(err)
}

// LatestHashed is Latest with the snapshot's stored canonical hash in
// hex, from the same ledger Latest reads; "" when that ledger is not a
// HashedLedger.
func (s Store) LatestHashed(ctx context.Context, prop string) (*warrant.View, string, error) {
	l := s.reader(ctx)
	hl, ok := l.(HashedLedger)
	if !ok {
		v, err := l.Latest(ctx, prop)
		return v, "", s.notFound(err)
	}
	v, sum, err := hl.LatestHashed(ctx, prop)
	if err != nil {
		return nil, "", s.notFound(err)
	}
	return v, hex.EncodeToString(sum[:]), nil
}

// List lists propositions matching query.
func (s Store) List(ctx context.Context, query string, limit int) ([]mcp.PropositionSummary, error) {
	rows, err := s.l.List(ctx, query, limit)
	if err != nil {
		return nil, s.stored(err)
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
			return false, s.stored(be.Unwrap())
		}
		return false, s.stored(err)
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
	return res.View, s.notFound(err)
}

// AppendCheck stores latest + the check.
func (s Store) AppendCheck(ctx context.Context, prop string, in mcp.CheckInput) (*warrant.View, error) {
	res, err := s.l.AppendCheck(ctx, prop, in.Check)
	return res.View, s.notFound(err)
}
