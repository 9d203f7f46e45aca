package mcp

import (
	"context"
	"errors"

	"github.com/ewp-go/ewp/warrant"
)

// ErrNotFound is what a Store returns (possibly wrapped) when the
// proposition, or the named snapshot of it, has never been stored. The
// server turns it into EWP_REFUSE_MISSING_VIEW.
var ErrNotFound = errors.New("ewp: not found")

// Store is everything the MCP server needs from the evidence ledger. It is
// defined here, by its consumer, so the server can be tested against an
// in-memory fake and the real ledger only needs a thin adapter.
//
// Rules every implementation keeps (EWP.md §9):
//
//   - Latest returns the most recently stored snapshot of the proposition;
//     Get returns exactly the snapshot stored under (propositionID, viewID).
//     Both return ErrNotFound when there is none.
//   - List finds propositions whose id or any assertion text of their latest
//     snapshot contains query, case-insensitively ("" matches all), ordered
//     by proposition id, at most limit of them (the server passes 1..500).
//   - Put stores v as an immutable snapshot. Re-sending an identical
//     snapshot is a no-op (stored=false, err=nil); a different snapshot under
//     an existing view_id, or a record id that comes back with different
//     content, is refused with a *warrant.Error whose Code is
//     warrant.CodeImmutableRecord.
//   - AppendEvidence and AppendCheck atomically create a new snapshot =
//     latest + the record(s), with a content-derived view_id, and return it.
//     They return ErrNotFound when the proposition has no snapshot yet. The
//     server has already validated and completed the records (every
//     SourceRef field is set, record proposition ids equal propositionID).
//
// Refusals should be *warrant.Error values so the code reaches the caller
// unchanged; any other error is reported as an internal failure.
type Store interface {
	Latest(ctx context.Context, propositionID string) (*warrant.View, error)
	Get(ctx context.Context, propositionID, viewID string) (*warrant.View, error)
	List(ctx context.Context, query string, limit int) ([]PropositionSummary, error)
	Put(ctx context.Context, v *warrant.View) (stored bool, err error)
	AppendEvidence(ctx context.Context, propositionID string, e EvidenceInput) (*warrant.View, error)
	AppendCheck(ctx context.Context, propositionID string, c CheckInput) (*warrant.View, error)
}

// HashedStore is a Store that keeps, with each snapshot, the sha256 of
// its EWP §8 canonical form (the ledger's canonical_sha256, computed when
// the snapshot was stored and checked by verify). A decision record names
// the view it judged by that hash; from a HashedStore the server takes the
// stored hash, read with the view, instead of canonicalising the view on
// every recorded call, which costs microseconds of CPU each and which a
// cache of recent hashes cannot save on a large ledger read at random. A
// Store without it gets the hash computed.
//
// LatestHashed is Latest — the same rules, the same ErrNotFound, the
// same routing of action reads (IsActionRead) — that also returns the
// hash in lowercase hex; "" when the store cannot give it for this read,
// and the server then computes it. (Only the latest snapshot is ever
// judged for an action.)
type HashedStore interface {
	Store
	LatestHashed(ctx context.Context, propositionID string) (v *warrant.View, canonicalSHA256 string, err error)
}

// PropositionSummary is one hit of Store.List: discovery data only, never
// a warrant.
type PropositionSummary struct {
	PropositionID string   `json:"proposition_id"`
	LatestViewID  string   `json:"latest_view_id"`
	Texts         []string `json:"texts"`
}

// EvidenceInput is one evidence item to append, with the assertion the
// caller optionally attached (nil when none). Both records are complete.
type EvidenceInput struct {
	Evidence  warrant.Evidence
	Assertion *warrant.Assertion
}

// CheckInput is one verification check to append. It is complete.
type CheckInput struct {
	Check warrant.Check
}

// actionReadKey marks the context of a read an action will rest on.
type actionReadKey struct{}

// IsActionRead reports whether a Store.Latest call is the read a decision
// to act rests on (may_act, and its stale-view check). A store that reads
// from a replica which may lag (a streaming-replication standby) must
// answer such a read from the primary: an action never rests on a
// snapshot older than the newest one stored.
func IsActionRead(ctx context.Context) bool {
	v, _ := ctx.Value(actionReadKey{}).(bool)
	return v
}

// WithActionRead marks ctx as the read an action rests on (see
// IsActionRead); may_act sets it, and store tests use it.
func WithActionRead(ctx context.Context) context.Context {
	return context.WithValue(ctx, actionReadKey{}, true)
}
