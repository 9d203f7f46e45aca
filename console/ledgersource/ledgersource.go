// Package ledgersource adapts the SQLite evidence ledger to
// console.EvidenceSource.
//
// Everything but Since uses the ledger's own API. Since (the snapshots
// stored after a sequence number, which the console's background state
// summary follows) has no ledger method yet; the adapter reads it from the
// ledger file through its own read-only connection, checking the schema
// version first so a ledger of another layout is refused rather than
// misread. When package ledger grows a SnapshotsSince, this query moves
// there.
package ledgersource

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // the same pure-Go driver the ledger uses

	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/warrant"
)

// Source is a ledger as a console.EvidenceSource. Close it after use.
type Source struct {
	l  *ledger.Ledger
	db *sql.DB
}

var _ console.EvidenceSource = (*Source)(nil)

// New adapts l, opening a read-only connection to its file for Since.
func New(l *ledger.Ledger) (*Source, error) {
	abs, err := filepath.Abs(l.Path())
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(5000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(2)
	var v string
	if err := db.QueryRow(`SELECT value FROM ledger_meta WHERE key = 'schema_version'`).Scan(&v); err != nil || v != strconv.Itoa(ledger.SchemaVersion) {
		db.Close()
		return nil, fmt.Errorf("ledgersource: %s: schema version %q, this console reads version %d (%v)", abs, v, ledger.SchemaVersion, err)
	}
	return &Source{l: l, db: db}, nil
}

// Close closes the adapter's own connection (not the ledger).
func (s *Source) Close() error { return s.db.Close() }

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
	out := make([]console.SnapshotInfo, len(h))
	for i, x := range h {
		out[i] = console.SnapshotInfo{Seq: x.Seq, PropositionID: x.PropositionID, ViewID: x.ViewID, CreatedAt: parseTime(x.CreatedAt)}
	}
	return out, nil
}

// Since reads the snapshots table by its primary key (seq), without bodies.
func (s *Source) Since(ctx context.Context, after int64, limit int) ([]console.SnapshotInfo, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, proposition_id, view_id, created_at FROM snapshots WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("ledgersource: read snapshots since %d: %w", after, err)
	}
	defer rows.Close()
	var out []console.SnapshotInfo
	for rows.Next() {
		var x console.SnapshotInfo
		var created string
		if err := rows.Scan(&x.Seq, &x.PropositionID, &x.ViewID, &created); err != nil {
			return nil, err
		}
		x.CreatedAt = parseTime(created)
		out = append(out, x)
	}
	return out, rows.Err()
}

func (s *Source) Head(ctx context.Context) (console.ChainHead, error) {
	h, err := s.l.Head(ctx)
	return console.ChainHead{Seq: h.Seq, Hash: h.Hash}, err
}

func (s *Source) Verify(ctx context.Context) (string, error) {
	rep, err := s.l.Verify(ctx)
	sum := fmt.Sprintf("%d events, %d snapshots, %d concept revisions", rep.Events, rep.Snapshots, rep.Primitives)
	if err != nil {
		return sum, err
	}
	return sum, nil
}

// parseTime reads the ledger's created_at (RFC 3339, UTC, as written).
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
