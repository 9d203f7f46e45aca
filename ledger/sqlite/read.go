package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/ewp-go/ewp/warrant"
)

// Bodies are read only within the ledger's limit (Options.MaxViewBytes):
// the body column is `CASE WHEN length(body) <= max THEN body ELSE
// length(body) END`, so an oversized snapshot comes back as its length and
// its bytes never enter memory (SQLite answers length() of a blob from the
// record header). A stored body is a JSON object, so a value not starting
// with '{' is that length (see oversized). Parameters are numbered because
// the limit comes before the WHERE: ?1 proposition, ?2 view, and the
// limit last.
const (
	latestBodyCol = `CASE WHEN length(body) <= ?2 THEN body ELSE length(body) END`
	getBodyCol    = `CASE WHEN length(body) <= ?3 THEN body ELSE length(body) END`
	latestSQL     = `SELECT seq, proposition_id, view_id, ` + latestBodyCol + `, created_at` + latestWhere
	getSQL        = `SELECT seq, proposition_id, view_id, ` + getBodyCol + `, created_at` + getWhere
	// Latest and Get need only the body: the other columns would cost a
	// conversion and an allocation each on every MCP call.
	latestBodySQL = `SELECT ` + latestBodyCol + latestWhere
	getBodySQL    = `SELECT ` + getBodyCol + getWhere
	// LatestHashed reads the stored canonical hash beside the body, in
	// the same statement.
	latestHashedSQL = `SELECT ` + latestBodyCol + `, canonical_sha256` + latestWhere
	latestWhere     = ` FROM snapshots WHERE proposition_id = ?1 ORDER BY seq DESC LIMIT 1`
	getWhere        = ` FROM snapshots WHERE proposition_id = ?1 AND view_id = ?2`
)

// oversized reports a body column that holds the length of a body over
// the limit rather than the body.
func oversized(col []byte) (int64, bool) {
	if len(col) == 0 || col[0] == '{' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(col), 10, 64)
	return n, err == nil
}

// hotReads are the reads prepared once (see readStmt).
var hotReads = []string{latestSQL, getSQL, latestBodySQL, getBodySQL, latestHashedSQL}

// readStmt returns the prepared form of a hot read, or nil when it could
// not be prepared (the caller then runs the SQL text directly). Preparing
// once saves SQLite from compiling the query on every MCP call.
func (l *Ledger) readStmt(query string) *sql.Stmt {
	l.reads.once.Do(func() {
		l.reads.stmts = make(map[string]*sql.Stmt, len(hotReads))
		for _, q := range hotReads {
			if st, err := l.r.Prepare(q); err == nil {
				l.reads.stmts[q] = st
			}
		}
	})
	return l.reads.stmts[query]
}

// queryRow runs one of the hot point reads. They ignore ctx's
// cancellation: an indexed read of one row takes microseconds, too short
// for cancelling it to save anything, while watching for it costs
// database/sql and the driver a goroutine each per read.
func (l *Ledger) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = context.WithoutCancel(ctx)
	if st := l.readStmt(query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return l.r.QueryRowContext(ctx, query, args...)
}

// query is queryRow for reads that scan in place (sql.RawBytes).
func (l *Ledger) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = context.WithoutCancel(ctx)
	if st := l.readStmt(query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return l.r.QueryContext(ctx, query, args...)
}

// Latest returns the most recently stored snapshot of a proposition, or a
// *warrant.Error with CodeMissingView.
func (l *Ledger) Latest(ctx context.Context, propositionID string) (*warrant.View, error) {
	v, err := l.readView(ctx, nil, latestBodySQL, propositionID, l.maxAny)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, missingProposition(propositionID)
	}
	return v, err
}

// Get returns one stored snapshot by view id, or CodeMissingView.
func (l *Ledger) Get(ctx context.Context, propositionID, viewID string) (*warrant.View, error) {
	v, err := l.readView(ctx, nil, getBodySQL, propositionID, viewID, l.maxAny)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, missingSnapshot(propositionID, viewID)
	}
	return v, err
}

// LatestHashed is Latest with the snapshot's stored canonical_sha256:
// sha256 of the view's EWP §8 canonical form (warrant.Canonical), which
// the put computed and Verify checks. A caller that records which view it
// judged (the MCP server's decision log) takes it instead of
// canonicalising the view again. Still one read.
func (l *Ledger) LatestHashed(ctx context.Context, propositionID string) (*warrant.View, [32]byte, error) {
	var sum [32]byte
	v, err := l.readView(ctx, &sum, latestHashedSQL, propositionID, l.maxAny)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, [32]byte{}, missingProposition(propositionID)
	}
	return v, sum, err
}

// readView runs a body-only point read — body and canonical_sha256 into
// sum when sum is not nil — and decodes the body where the driver holds
// it: the decoder copies the text once anyway, so scanning it into a
// slice of our own first would copy it twice. sql.ErrNoRows comes back as
// it is.
func (l *Ledger) readView(ctx context.Context, sum *[32]byte, query string, args ...any) (*warrant.View, error) {
	rows, err := l.query(ctx, query, args...)
	if err != nil {
		return nil, ledgerErr("read snapshot", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, ledgerErr("read snapshot", err)
		}
		return nil, sql.ErrNoRows
	}
	var body sql.RawBytes
	if sum == nil {
		err = ledgerErrOrNil("read snapshot", rows.Scan(&body))
	} else {
		err = scanHashed(rows, &body, sum)
	}
	if err != nil {
		return nil, err
	}
	if n, over := oversized(body); over {
		view := ""
		if len(args) == 3 {
			view, _ = args[1].(string)
		}
		prop, _ := args[0].(string)
		return nil, bodyLimit(prop, view, n, l.maxBody)
	}
	return ledger.DecodeStored(body)
}

// scanHashed scans a hashed read's row: the body, and canonical_sha256
// into sum. It is apart from readView so that Latest and Get, the hot
// reads, do not pay for a second column they do not read.
func scanHashed(rows *sql.Rows, body *sql.RawBytes, sum *[32]byte) error {
	var canon sql.RawBytes
	if err := rows.Scan(body, &canon); err != nil {
		return ledgerErr("read snapshot", err)
	}
	return ledger.StoredCanonicalSum(sum, canon)
}

// bodyLimit is the refusal of a stored form over max bytes.
func bodyLimit(prop, view string, n, max int64) error {
	which := fmt.Sprintf("the latest snapshot of %q", prop)
	if view != "" {
		which = fmt.Sprintf("snapshot %q of %q", view, prop)
	}
	return &warrant.Error{Code: warrant.CodeLimitExceeded, Field: "view",
		Rule: fmt.Sprintf("%s is %d bytes in its stored form, over this ledger's limit of %d (MaxViewBytes); open the ledger with a higher limit to store or read it", which, n, max)}
}

// LatestSnapshot is Latest without decoding.
func (l *Ledger) LatestSnapshot(ctx context.Context, propositionID string) (*ledger.Snapshot, error) {
	row := l.queryRow(ctx, latestSQL, propositionID, l.maxAny)
	s, err := l.scanSnapshot(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, missingProposition(propositionID)
	}
	return s, err
}

// GetSnapshot is Get without decoding.
func (l *Ledger) GetSnapshot(ctx context.Context, propositionID, viewID string) (*ledger.Snapshot, error) {
	row := l.queryRow(ctx, getSQL, propositionID, viewID, l.maxAny)
	s, err := l.scanSnapshot(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, missingSnapshot(propositionID, viewID)
	}
	return s, err
}

func missingSnapshot(prop, viewID string) error {
	return &warrant.Error{Code: warrant.CodeMissingView, Field: "view_id",
		Rule: fmt.Sprintf("proposition %q has no snapshot with view_id %q; omit view_id for the latest, or list the proposition's snapshots", prop, viewID)}
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
func (l *Ledger) History(ctx context.Context, propositionID string) ([]ledger.Snapshot, error) {
	rows, err := l.r.QueryContext(ctx, `SELECT seq, proposition_id, view_id, created_at FROM snapshots WHERE proposition_id = ? ORDER BY seq`, propositionID)
	if err != nil {
		return nil, ledgerErr("read history", err)
	}
	defer rows.Close()
	var out []ledger.Snapshot
	for rows.Next() {
		var s ledger.Snapshot
		if err := rows.Scan(&s.Seq, &s.PropositionID, &s.ViewID, &s.CreatedAt); err != nil {
			return nil, ledgerErr("read history", err)
		}
		out = append(out, s)
	}
	return out, ledgerErrOrNil("read history", rows.Err())
}

func (l *Ledger) scanSnapshot(row *sql.Row) (*ledger.Snapshot, error) {
	var s ledger.Snapshot
	err := row.Scan(&s.Seq, &s.PropositionID, &s.ViewID, &s.Body, &s.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if err != nil {
		return nil, ledgerErr("read snapshot", err)
	}
	if n, over := oversized(s.Body); over {
		return nil, bodyLimit(s.PropositionID, s.ViewID, n, l.maxBody)
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

// SnapshotsSince lists the snapshots stored after sequence number afterSeq,
// in storage order, at most limit, without bodies: a reader that follows
// the ledger (the operator console's state summary) reads only what is new
// since its last look. A limit of zero or less is refused, so a follower
// always reads in pages.
func (l *Ledger) SnapshotsSince(ctx context.Context, afterSeq int64, limit int) ([]ledger.Snapshot, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("ledger: SnapshotsSince limit %d: give a page size above zero", limit)
	}
	rows, err := l.r.QueryContext(ctx, `SELECT seq, proposition_id, view_id, created_at FROM snapshots WHERE seq > ? ORDER BY seq LIMIT ?`, afterSeq, limit)
	if err != nil {
		return nil, ledgerErr("read snapshots since", err)
	}
	defer rows.Close()
	var out []ledger.Snapshot
	for rows.Next() {
		var s ledger.Snapshot
		if err := rows.Scan(&s.Seq, &s.PropositionID, &s.ViewID, &s.CreatedAt); err != nil {
			return nil, ledgerErr("read snapshots since", err)
		}
		out = append(out, s)
	}
	return out, ledgerErrOrNil("read snapshots since", rows.Err())
}
