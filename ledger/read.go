package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ewp-go/ewp/warrant"
)

// Snapshot is a stored snapshot as the ledger holds it.
type Snapshot struct {
	Seq           int64
	PropositionID string
	ViewID        string
	// Body is the stored form (warrant.Encode of the view that was put).
	Body      []byte
	CreatedAt string
}

// View decodes the stored body.
func (s *Snapshot) View() (*warrant.View, error) { return decodeStored(s.Body) }

const (
	snapCols  = `seq, proposition_id, view_id, body, created_at`
	latestSQL = `SELECT ` + snapCols + ` FROM snapshots WHERE proposition_id = ? ORDER BY seq DESC LIMIT 1`
	getSQL    = `SELECT ` + snapCols + ` FROM snapshots WHERE proposition_id = ? AND view_id = ?`
)

// readStmt returns the prepared form of a hot read, or nil when it could
// not be prepared (the caller then runs the SQL text directly). Preparing
// once saves SQLite from compiling the query on every MCP call.
func (l *Ledger) readStmt(which string) *sql.Stmt {
	l.reads.once.Do(func() {
		l.reads.latest, _ = l.r.Prepare(latestSQL)
		l.reads.get, _ = l.r.Prepare(getSQL)
	})
	if which == latestSQL {
		return l.reads.latest
	}
	return l.reads.get
}

func (l *Ledger) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := l.readStmt(query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return l.r.QueryRowContext(ctx, query, args...)
}

// Latest returns the most recently stored snapshot of a proposition, or a
// *warrant.Error with CodeMissingView.
func (l *Ledger) Latest(ctx context.Context, propositionID string) (*warrant.View, error) {
	s, err := l.LatestSnapshot(ctx, propositionID)
	if err != nil {
		return nil, err
	}
	return s.View()
}

// Get returns one stored snapshot by view id, or CodeMissingView.
func (l *Ledger) Get(ctx context.Context, propositionID, viewID string) (*warrant.View, error) {
	s, err := l.GetSnapshot(ctx, propositionID, viewID)
	if err != nil {
		return nil, err
	}
	return s.View()
}

// LatestSnapshot is Latest without decoding.
func (l *Ledger) LatestSnapshot(ctx context.Context, propositionID string) (*Snapshot, error) {
	row := l.queryRow(ctx, latestSQL, propositionID)
	s, err := scanSnapshot(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, missingProposition(propositionID)
	}
	return s, err
}

// GetSnapshot is Get without decoding.
func (l *Ledger) GetSnapshot(ctx context.Context, propositionID, viewID string) (*Snapshot, error) {
	row := l.queryRow(ctx, getSQL, propositionID, viewID)
	s, err := scanSnapshot(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &warrant.Error{Code: warrant.CodeMissingView, Field: "view_id",
			Rule: fmt.Sprintf("proposition %q has no snapshot with view_id %q; omit view_id for the latest, or list the proposition's snapshots", propositionID, viewID)}
	}
	return s, err
}

// LatestViewID returns the view id of the latest snapshot, for the action
// gate's stale-view check, without reading the body.
func (l *Ledger) LatestViewID(ctx context.Context, propositionID string) (string, error) {
	var id string
	err := l.r.QueryRowContext(ctx, `SELECT view_id FROM snapshots WHERE proposition_id = ? ORDER BY seq DESC LIMIT 1`, propositionID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", missingProposition(propositionID)
	}
	if err != nil {
		return "", ledgerErr("read latest view id", err)
	}
	return id, nil
}

// History lists the snapshots of a proposition, oldest first, without
// bodies.
func (l *Ledger) History(ctx context.Context, propositionID string) ([]Snapshot, error) {
	rows, err := l.r.QueryContext(ctx, `SELECT seq, proposition_id, view_id, created_at FROM snapshots WHERE proposition_id = ? ORDER BY seq`, propositionID)
	if err != nil {
		return nil, ledgerErr("read history", err)
	}
	defer rows.Close()
	var out []Snapshot
	for rows.Next() {
		var s Snapshot
		if err := rows.Scan(&s.Seq, &s.PropositionID, &s.ViewID, &s.CreatedAt); err != nil {
			return nil, ledgerErr("read history", err)
		}
		out = append(out, s)
	}
	return out, ledgerErrOrNil("read history", rows.Err())
}

func scanSnapshot(row *sql.Row) (*Snapshot, error) {
	var s Snapshot
	err := row.Scan(&s.Seq, &s.PropositionID, &s.ViewID, &s.Body, &s.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if err != nil {
		return nil, ledgerErr("read snapshot", err)
	}
	return &s, nil
}

func missingProposition(prop string) error {
	return &warrant.Error{Code: warrant.CodeMissingView, Field: "proposition_id",
		Rule: fmt.Sprintf("proposition %q has no stored snapshot; store a view for it first (ewp-ingest or evidence_view_put), or find ids with list_propositions", prop)}
}

func ledgerErrOrNil(op string, err error) error {
	if err == nil {
		return nil
	}
	return ledgerErr(op, err)
}
