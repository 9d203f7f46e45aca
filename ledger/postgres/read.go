package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/warrant"
)

// Every body read names the limit as $1 and gets NULL for a body over it,
// with its length, so an oversized snapshot is refused before its bytes
// leave the server (Options.MaxViewBytes). The hashed read adds the
// stored canonical_sha256 in the same statement. pgx prepares each
// statement once per connection (its default statement cache), so these
// constant texts are the prepared hot reads the SQLite ledger keeps.
const (
	bodyCols        = `SELECT CASE WHEN length(body) <= $1 THEN body END, length(body) FROM snapshots `
	hashedCols      = `SELECT CASE WHEN length(body) <= $1 THEN body END, length(body), canonical_sha256 FROM snapshots `
	latestWhere     = `WHERE proposition_id = $2 ORDER BY seq DESC LIMIT 1`
	getWhere        = `WHERE proposition_id = $2 AND view_id = $3`
	latestBodySQL   = bodyCols + latestWhere
	getBodySQL      = bodyCols + getWhere
	latestHashedSQL = hashedCols + latestWhere
	snapCols        = `SELECT CASE WHEN length(body) <= $1 THEN body END, length(body), seq, proposition_id, view_id, created_at FROM snapshots `
)

// Latest returns the most recently stored snapshot of a proposition, or a
// *warrant.Error with CodeMissingView.
func (l *Ledger) Latest(ctx context.Context, propositionID string) (*warrant.View, error) {
	v, err := l.readView(ctx, nil, propositionID, "", latestBodySQL, l.maxBody, []byte(propositionID))
	if isNoRows(err) {
		return nil, missingProposition(propositionID)
	}
	return v, err
}

// Get returns one stored snapshot by view id, or CodeMissingView.
func (l *Ledger) Get(ctx context.Context, propositionID, viewID string) (*warrant.View, error) {
	v, err := l.readView(ctx, nil, propositionID, viewID, getBodySQL, l.maxBody, []byte(propositionID), []byte(viewID))
	if isNoRows(err) {
		return nil, missingSnapshot(propositionID, viewID)
	}
	return v, err
}

// LatestHashed is Latest with the snapshot's stored canonical_sha256, as
// the SQLite ledger's: sha256 of warrant.Canonical(view), computed at put
// and checked by Verify, read in the same round trip as the body.
func (l *Ledger) LatestHashed(ctx context.Context, propositionID string) (*warrant.View, [32]byte, error) {
	var sum [32]byte
	v, err := l.readView(ctx, &sum, propositionID, "", latestHashedSQL, l.maxBody, []byte(propositionID))
	if isNoRows(err) {
		return nil, [32]byte{}, missingProposition(propositionID)
	}
	return v, sum, err
}

// readView reads and decodes one body, and canonical_sha256 into sum
// when sum is not nil (the query then selects it third).
func (l *Ledger) readView(ctx context.Context, sum *[32]byte, prop, view, query string, args ...any) (*warrant.View, error) {
	var body []byte
	var n int64
	var err error
	row := l.pool.QueryRow(ctx, query, args...)
	if sum == nil {
		err = row.Scan(&body, &n)
	} else {
		err = scanHashed(row, &body, &n, sum)
	}
	if err != nil {
		if isNoRows(err) {
			return nil, err
		}
		return nil, ledgerErr("read snapshot", err)
	}
	if body == nil {
		return nil, bodyLimit(prop, view, n, l.maxBody)
	}
	return ledger.DecodeStored(body)
}

// scanHashed scans a hashed read's row, canonical_sha256 into sum; apart
// from readView so that Latest and Get do not pay for a column they do
// not read. A missing row comes back as it is.
func scanHashed(row pgx.Row, body *[]byte, n *int64, sum *[32]byte) error {
	var canon []byte
	if err := row.Scan(body, n, &canon); err != nil {
		return err
	}
	return ledger.StoredCanonicalSum(sum, canon)
}

// bodyLimit is the refusal of a stored form over max bytes, worded as the
// SQLite ledger's.
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
	s, err := l.readSnapshot(ctx, snapCols+`WHERE proposition_id = $2 ORDER BY seq DESC LIMIT 1`, l.maxBody, []byte(propositionID))
	if isNoRows(err) {
		return nil, missingProposition(propositionID)
	}
	return s, err
}

// GetSnapshot is Get without decoding.
func (l *Ledger) GetSnapshot(ctx context.Context, propositionID, viewID string) (*ledger.Snapshot, error) {
	s, err := l.readSnapshot(ctx, snapCols+`WHERE proposition_id = $2 AND view_id = $3`, l.maxBody, []byte(propositionID), []byte(viewID))
	if isNoRows(err) {
		return nil, missingSnapshot(propositionID, viewID)
	}
	return s, err
}

func (l *Ledger) readSnapshot(ctx context.Context, query string, args ...any) (*ledger.Snapshot, error) {
	var s ledger.Snapshot
	var prop, view []byte
	var n int64
	err := l.pool.QueryRow(ctx, query, args...).Scan(&s.Body, &n, &s.Seq, &prop, &view, &s.CreatedAt)
	if isNoRows(err) {
		return nil, err
	}
	if err != nil {
		return nil, ledgerErr("read snapshot", err)
	}
	s.PropositionID, s.ViewID = string(prop), string(view)
	if s.Body == nil {
		return nil, bodyLimit(s.PropositionID, s.ViewID, n, l.maxBody)
	}
	return &s, nil
}

// LatestViewID returns the view id of the latest snapshot without its body.
func (l *Ledger) LatestViewID(ctx context.Context, propositionID string) (string, error) {
	var id []byte
	err := l.pool.QueryRow(ctx, `SELECT view_id FROM snapshots WHERE proposition_id = $1 ORDER BY seq DESC LIMIT 1`, []byte(propositionID)).Scan(&id)
	if isNoRows(err) {
		return "", missingProposition(propositionID)
	}
	if err != nil {
		return "", ledgerErr("read latest view id", err)
	}
	return string(id), nil
}

// History lists the snapshots of a proposition, oldest first, without
// bodies.
func (l *Ledger) History(ctx context.Context, propositionID string) ([]ledger.Snapshot, error) {
	rows, err := l.pool.Query(ctx, `SELECT seq, view_id, created_at FROM snapshots WHERE proposition_id = $1 ORDER BY seq`, []byte(propositionID))
	if err != nil {
		return nil, ledgerErr("read history", err)
	}
	defer rows.Close()
	var out []ledger.Snapshot
	for rows.Next() {
		s := ledger.Snapshot{PropositionID: propositionID}
		var view []byte
		if err := rows.Scan(&s.Seq, &view, &s.CreatedAt); err != nil {
			return nil, ledgerErr("read history", err)
		}
		s.ViewID = string(view)
		out = append(out, s)
	}
	return out, ledgerErrOrNil("read history", rows.Err())
}

// Head returns the chain's last event; Seq 0 and Hash "" when empty.
func (l *Ledger) Head(ctx context.Context) (ledger.Head, error) {
	var h ledger.Head
	var sum []byte
	err := l.pool.QueryRow(ctx, `SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`).Scan(&h.Seq, &sum)
	if isNoRows(err) {
		return ledger.Head{}, nil
	}
	if err != nil {
		return ledger.Head{}, ledgerErr("read chain head", err)
	}
	h.Hash = hex.EncodeToString(sum)
	return h, nil
}

// VerifyHead checks that the ledger holds exactly the event h names (see
// the SQLite ledger's VerifyHead): a cut-off tail or a rewritten history
// is a *ledger.Break; growth since is not.
func (l *Ledger) VerifyHead(ctx context.Context, h ledger.Head) error {
	if h.Seq == 0 {
		return nil
	}
	var sum []byte
	err := l.pool.QueryRow(ctx, `SELECT hash FROM events WHERE seq = $1`, h.Seq).Scan(&sum)
	if isNoRows(err) {
		last, err := l.Head(ctx)
		if err != nil {
			return err
		}
		return &ledger.Break{Seq: h.Seq, Table: "events", What: fmt.Sprintf(
			"the kept head %s names event %d, but the ledger ends at event %d: history was cut off (or --db is another ledger)", h, h.Seq, last.Seq)}
	}
	if err != nil {
		return ledgerErr("read chain head", err)
	}
	if got := hex.EncodeToString(sum); got != strings.ToLower(h.Hash) {
		return &ledger.Break{Seq: h.Seq, Table: "events", What: fmt.Sprintf(
			"the kept head %s does not match: event %d has hash %s, so the history up to it was rewritten (or --db is another ledger)", h, h.Seq, got)}
	}
	return nil
}

func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

func missingProposition(prop string) error {
	return &warrant.Error{Code: warrant.CodeMissingView, Field: "proposition_id",
		Rule: fmt.Sprintf("proposition %q has no stored snapshot; store a view for it first (ewp-ingest or evidence_view_put), or find ids with list_propositions", prop)}
}

func missingSnapshot(prop, viewID string) error {
	return &warrant.Error{Code: warrant.CodeMissingView, Field: "view_id",
		Rule: fmt.Sprintf("proposition %q has no snapshot with view_id %q; omit view_id for the latest, or list the proposition's snapshots", prop, viewID)}
}

// SnapshotsSince lists the snapshots stored after sequence number afterSeq,
// in storage order, at most limit, without bodies, as the SQLite ledger's
// does (the primary key on seq serves it).
func (l *Ledger) SnapshotsSince(ctx context.Context, afterSeq int64, limit int) ([]ledger.Snapshot, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("ledger: SnapshotsSince limit %d: give a page size above zero", limit)
	}
	rows, err := l.pool.Query(ctx, `SELECT seq, proposition_id, view_id, created_at FROM snapshots WHERE seq > $1 ORDER BY seq LIMIT $2`, afterSeq, limit)
	if err != nil {
		return nil, ledgerErr("read snapshots since", err)
	}
	defer rows.Close()
	var out []ledger.Snapshot
	for rows.Next() {
		var s ledger.Snapshot
		var prop, view []byte
		if err := rows.Scan(&s.Seq, &prop, &view, &s.CreatedAt); err != nil {
			return nil, ledgerErr("read snapshots since", err)
		}
		s.PropositionID, s.ViewID = string(prop), string(view)
		out = append(out, s)
	}
	return out, ledgerErrOrNil("read snapshots since", rows.Err())
}
