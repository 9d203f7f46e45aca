// Package ledgersource adapts an evidence ledger, SQLite or PostgreSQL, to
// console.EvidenceSource. Everything goes through the ledger's own API:
// Since is the ledgers' SnapshotsSince (a page of the snapshots stored
// after a sequence number, which the console's background state summary
// follows).
package ledgersource

import (
	"context"
	"fmt"
	"time"

	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/internal/plural"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
)

// Ledger is what the adapter reads: both stores (*sqlite.Ledger and
// *postgres.Ledger) have it.
type Ledger interface {
	Latest(ctx context.Context, propositionID string) (*warrant.View, error)
	Get(ctx context.Context, propositionID, viewID string) (*warrant.View, error)
	History(ctx context.Context, propositionID string) ([]ledger.Snapshot, error)
	SnapshotsSince(ctx context.Context, afterSeq int64, limit int) ([]ledger.Snapshot, error)
	Head(ctx context.Context) (ledger.Head, error)
	Verify(ctx context.Context) (ledger.VerifyReport, error)
}

// Source is a ledger as a console.EvidenceSource.
type Source struct {
	l Ledger
}

var _ console.EvidenceSource = (*Source)(nil)

// New adapts the SQLite ledger l. It cannot fail; the error is kept so
// existing callers compile.
func New(l *sqlite.Ledger) (*Source, error) { return &Source{l: l}, nil }

// ForStore adapts the ledger store.Open returned, whichever store it is.
// A store.Ledger without SnapshotsSince (a test fake, say) is refused with
// a message naming it.
func ForStore(l store.Ledger) (*Source, error) {
	sl, ok := l.(Ledger)
	if !ok {
		return nil, fmt.Errorf("ledgersource: the console cannot follow a %T: it has no SnapshotsSince (the SQLite and PostgreSQL ledgers have)", l)
	}
	return &Source{l: sl}, nil
}

// Close is a no-op: the adapter holds nothing of its own (the ledger is
// the caller's to close).
func (s *Source) Close() error { return nil }

func (s *Source) Latest(ctx context.Context, id string) (*warrant.View, error) {
	return s.l.Latest(ctx, id)
}

func (s *Source) Get(ctx context.Context, id, viewID string) (*warrant.View, error) {
	return s.l.Get(ctx, id, viewID)
}

func (s *Source) History(ctx context.Context, id string) ([]console.SnapshotInfo, error) {
	h, err := s.l.History(ctx, id)
	if err != nil {
		return nil, err
	}
	return infos(h), nil
}

// Since is the ledger's SnapshotsSince, bodies left out.
func (s *Source) Since(ctx context.Context, after int64, limit int) ([]console.SnapshotInfo, error) {
	h, err := s.l.SnapshotsSince(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	return infos(h), nil
}

func (s *Source) Head(ctx context.Context) (console.ChainHead, error) {
	h, err := s.l.Head(ctx)
	return console.ChainHead{Seq: h.Seq, Hash: h.Hash}, err
}

func (s *Source) Verify(ctx context.Context) (string, error) {
	rep, err := s.l.Verify(ctx)
	return fmt.Sprintf("%s, %s, %s", plural.Count(rep.Events, "event", "events"), plural.Count(rep.Snapshots, "snapshot", "snapshots"),
		plural.Count(rep.Primitives, "concept revision", "concept revisions")), err
}

func infos(h []ledger.Snapshot) []console.SnapshotInfo {
	out := make([]console.SnapshotInfo, len(h))
	for i, x := range h {
		out[i] = console.SnapshotInfo{Seq: x.Seq, PropositionID: x.PropositionID, ViewID: x.ViewID, CreatedAt: parseTime(x.CreatedAt)}
	}
	return out
}

// parseTime reads the ledger's created_at (RFC 3339, UTC, as written).
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
