// Package ledger holds the evidence ledger's domain (EWP §9): the
// interface every store implements ([Ledger]), and the types its methods
// take and return — stored snapshots, write and append results, concept-
// graph revisions, the chain head, the verify report and its [Break], and
// the storage [Error] that callers tell apart from a refusal of the input
// (a *warrant.Error).
//
// The types here are store-neutral and import no database driver; the
// stores are packages of their own that never import each other:
// ledger/sqlite (a file, modernc.org/sqlite) and ledger/postgres (pgx).
// Package store opens either by its --db value. The rules both keep live
// in store-neutral packages too: record identity in snapshot, the hash
// chain and its event payloads in chain; ledger/ledgertest is the suite
// both stores pass.
package ledger

import (
	"context"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// Ledger is what every store offers (ledger/sqlite, ledger/postgres), and
// what ingest, the MCP server and the concept graph use.
type Ledger interface {
	Put(ctx context.Context, views []*warrant.View) (PutResult, error)
	PutEach(ctx context.Context, n int, view func(i int) (*warrant.View, error)) (PutResult, error)
	PutStream(ctx context.Context, s Stream) (PutResult, error)
	AppendEvidence(ctx context.Context, propositionID string, e warrant.Evidence) (AppendResult, error)
	AppendCheck(ctx context.Context, propositionID string, c warrant.Check) (AppendResult, error)
	Append(ctx context.Context, propositionID string, r snapshot.Records) (AppendResult, error)

	Latest(ctx context.Context, propositionID string) (*warrant.View, error)
	Get(ctx context.Context, propositionID, viewID string) (*warrant.View, error)
	LatestSnapshot(ctx context.Context, propositionID string) (*Snapshot, error)
	GetSnapshot(ctx context.Context, propositionID, viewID string) (*Snapshot, error)
	// LatestHashed is Latest with the snapshot's stored canonical_sha256
	// (sha256 of warrant.Canonical(view)), read in the same query: the MCP
	// server records it with each decision.
	LatestHashed(ctx context.Context, propositionID string) (*warrant.View, [32]byte, error)
	LatestViewID(ctx context.Context, propositionID string) (string, error)
	History(ctx context.Context, propositionID string) ([]Snapshot, error)
	List(ctx context.Context, query string, limit int) ([]PropositionSummary, error)

	Head(ctx context.Context) (Head, error)
	Verify(ctx context.Context) (VerifyReport, error)
	VerifyHead(ctx context.Context, h Head) error

	AppendPrimitives(ctx context.Context, validate func(current []PrimitiveRow) ([]PrimitiveRow, error)) error
	CurrentPrimitives(ctx context.Context) ([]PrimitiveRow, error)
	GraphVersion(ctx context.Context) (int64, error)
	PrimitivesSince(ctx context.Context, seq int64) ([]PrimitiveRow, error)

	Path() string
	ReadOnly() bool
	Close() error
}
