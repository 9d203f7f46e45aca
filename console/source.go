package console

import (
	"context"
	"time"

	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/warrant"
)

// EvidenceSource is what the console reads from an evidence store. It is
// store-neutral: console/ledgersource adapts the SQLite ledger, and a
// PostgreSQL store can satisfy it the same way.
type EvidenceSource interface {
	// Latest and Get return a stored snapshot, decoded; a missing one is
	// an error (the ledger's *warrant.Error with CodeMissingView).
	Latest(ctx context.Context, propositionID string) (*warrant.View, error)
	Get(ctx context.Context, propositionID, viewID string) (*warrant.View, error)
	// History lists a proposition's snapshots, oldest first.
	History(ctx context.Context, propositionID string) ([]SnapshotInfo, error)
	// Since lists snapshots stored after sequence number afterSeq, in
	// storage order, at most limit: the background state summary follows
	// the store with it instead of re-reading every proposition.
	Since(ctx context.Context, afterSeq int64, limit int) ([]SnapshotInfo, error)
	// Head is the store's chain head; Verify walks the whole chain.
	Head(ctx context.Context) (ChainHead, error)
	Verify(ctx context.Context) (string, error)
}

// SnapshotInfo is one stored snapshot without its body.
type SnapshotInfo struct {
	Seq           int64
	PropositionID string
	ViewID        string
	CreatedAt     time.Time
}

// ChainHead names the last entry of a hash chain.
type ChainHead struct {
	Seq  int64
	Hash string
}

// GraphFunc returns the current concept graph and its version;
// (*graphstore.Store).Graph is one.
type GraphFunc func(ctx context.Context) (*grounding.Graph, int64, error)

// LogVerifyFunc walks the decision log's chain; nil error means intact,
// and the string summarises what was checked.
type LogVerifyFunc func(ctx context.Context) (string, error)
