package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

// DefaultLimit is List's page size when the filter gives none.
const DefaultLimit = auditchain.DefaultLimit

// Decision returns the decision recorded under id, or audit.ErrNotFound.
func (l *Log) Decision(ctx context.Context, id string) (*audit.Decision, error) {
	body, err := decisionBody(ctx, l.r, asJSON(id))
	return l.decoded("decision "+id, body, err)
}

// ByIdempotencyKey returns the decision recorded under (credential, key),
// or audit.ErrNotFound.
func (l *Log) ByIdempotencyKey(ctx context.Context, credential, key string) (*audit.Decision, error) {
	return l.oneDecision(ctx, fmt.Sprintf("idempotency_key %q of credential %q", key, credential),
		`d.credential = ? AND d.idem_key = ?`, asJSON(credential), asJSON(key))
}

func (l *Log) oneDecision(ctx context.Context, what, where string, args ...any) (*audit.Decision, error) {
	f, err := rowWhere(ctx, l.r, where, args...)
	return l.decoded(what, f.body, err)
}

// decoded is the decision a lookup of what found (body), or its error.
func (l *Log) decoded(what string, body []byte, err error) (*audit.Decision, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s is not in %s", audit.ErrNotFound, what, l.path)
	}
	if err != nil {
		return nil, l.storeErr("read "+what, err)
	}
	return decodeDecision(body)
}

// Query is a Filter with the store's extras (auditchain.Query).
type Query = auditchain.Query

// List returns a page of decisions in recording order: Since is
// inclusive, Until exclusive; a zero Limit means DefaultLimit. Continue with Filter.After
// set to the last decision_id of the page. Filters by time, proposition
// or outcome scan the decisions: they are an operator's queries.
func (l *Log) List(ctx context.Context, f audit.Filter) ([]audit.Decision, error) {
	if f.Limit <= 0 {
		f.Limit = DefaultLimit
	}
	var out []audit.Decision
	err := l.Each(ctx, Query{Filter: f}, func(d *audit.Decision) error {
		out = append(out, *d)
		return nil
	})
	return out, err
}

// Each calls fn with every decision q selects, streaming from one read
// transaction (memory stays flat however many match); a zero Limit means
// all. An error from fn stops the walk and is returned.
//
// A query for pending decisions, for those that presented an approval or
// for REQUIRE_CONFIRMATION ones selects only special decisions, which all
// have decisions rows: it is answered from them (auditchain.ListSQL).
// Any other walks the bodies in recording order (eachBody).
func (l *Log) Each(ctx context.Context, q Query, fn func(*audit.Decision) error) error {
	if !rowsHoldAll(q) {
		return l.eachBody(ctx, q, fn)
	}
	query, args, err := l.selectSQL(ctx, q)
	if err != nil {
		return err
	}
	fail := func(err error) error { return l.storeErr("list decisions", err) }
	// One read transaction: the bodies are read beside the listing, from
	// the same snapshot and connection.
	tx, err := l.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	bodies := bodyReader{ctx: ctx, q: tx}
	return auditchain.EachBodyFrom(rows, func() ([]byte, error) {
		var event int64
		if err := rows.Scan(&event); err != nil {
			return nil, err
		}
		return bodies.body(event)
	}, decodeDecision, fn, fail)
}

// listSQL is the listing query as SQLite spells it.
var listSQL = auditchain.ListSQL{
	Decisions: "decisions", Approvals: "approvals", EmptyID: "''", Column: "event", Placeholder: auditchain.Question,
	Bind: func(id string) any { return id },
}

func (l *Log) selectSQL(ctx context.Context, q Query) (string, []any, error) {
	return listSQL.Select(q, func(id any) (key any, found bool, err error) {
		f, err := findDecision(ctx, l.r, id.(string))
		if errors.Is(err, errNoDecision) {
			return nil, false, nil
		}
		return f.seq, err == nil, l.storeErr("list decisions", err)
	})
}

// rowsHoldAll reports a query every decision of which has a decisions
// row (see special).
func rowsHoldAll(q Query) bool {
	return q.Pending || q.ApprovalID != "" || q.Outcome == audit.OutcomeRequireConfirmation
}

// Approval returns the approval or rejection recorded under id, or
// audit.ErrNotFound, provided the chain vouches for it: its events row
// records exactly this row and body (auditchain.ChainedApproval; an
// approval inserted behind the chain or edited after is refused with
// audit.ErrApprovalNotOnChain). The events table holds only approvals and
// uses, so finding the event by row scans few rows.
func (l *Log) Approval(ctx context.Context, id string) (*audit.Approval, error) {
	var row approvalRow
	var payload sql.NullString
	var prev, hash []byte
	err := l.r.QueryRowContext(ctx, `SELECT a.seq, a.approval_id, a.decision_id, a.verdict, a.created_ns, a.body, a.body_sha256,
		e.payload, e.prev_hash, e.hash
		FROM approvals a LEFT JOIN events e ON e.tbl = 'approvals' AND e.row_seq = a.seq
		WHERE a.approval_id = ? ORDER BY e.seq LIMIT 1`, asJSON(id)).
		Scan(&row.Seq, &row.ApprovalID, &row.DecisionID, &row.Verdict, &row.CreatedNS, &row.Body, &row.BodySum, &payload, &prev, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: approval %s is not in %s", audit.ErrNotFound, id, l.path)
	}
	if err != nil {
		return nil, l.storeErr("read approval "+id, err)
	}
	return auditchain.ChainedApproval(id, &row, auditchain.ChainEntry{Found: payload.Valid, Payload: payload.String, Prev: prev, Hash: hash})
}

// ApprovalsFor lists the answers to a decision (at most one: a decision
// is answered once), oldest first.
func (l *Log) ApprovalsFor(ctx context.Context, decisionID string) ([]audit.Approval, error) {
	rows, err := l.r.QueryContext(ctx, `SELECT body FROM approvals WHERE decision_id = ? ORDER BY seq`, asJSON(decisionID))
	if err != nil {
		return nil, l.storeErr("read approvals", err)
	}
	defer rows.Close()
	var out []audit.Approval
	err = auditchain.EachBody(rows, decodeApproval, func(a *audit.Approval) error {
		out = append(out, *a)
		return nil
	}, func(err error) error { return l.storeErr("read approvals", err) })
	return out, err
}

// UseOf returns the consumption of a single-use approval, or
// audit.ErrNotFound while it is unused.
func (l *Log) UseOf(ctx context.Context, approvalID string) (*Use, error) {
	u := &Use{}
	err := l.r.QueryRowContext(ctx, `SELECT seq, approval_id, used_by, used_ns FROM approval_uses WHERE approval_id = ?`, asJSON(approvalID)).
		Scan(&u.Seq, &u.ApprovalID, &u.UsedBy, &u.UsedNS)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: approval %s is unused", audit.ErrNotFound, approvalID)
	}
	if err != nil {
		return nil, l.storeErr("read approval use", err)
	}
	return u, nil
}

// Head returns the chain's last event; Seq 0 and Hash "" for an empty log.
func (l *Log) Head(ctx context.Context) (audit.Head, error) {
	h, err := readHead(ctx, l.r)
	return h, l.storeErr("read chain head", err)
}

// readHead is the chain's last event: the last event row's or the last
// decision's, whichever is later.
func readHead(ctx context.Context, q querier) (audit.Head, error) {
	seq, hash, _, err := lastEntry(ctx, q)
	if err != nil || seq == 0 {
		return audit.Head{}, err
	}
	return audit.Head{Seq: seq, Hash: hex.EncodeToString(hash)}, nil
}

// lastEntry is the chain's last entry — the last event row's or the last
// decision's (the end of the last decision_bodies row), whichever is
// later — and the last decision's seq; 0, the genesis hash and 0 for an
// empty log.
func lastEntry(ctx context.Context, q querier) (seq int64, hash []byte, dseq int64, err error) {
	seq, hash = 0, genesis()
	err = q.QueryRowContext(ctx, `SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`).Scan(&seq, &hash)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, nil, 0, err
	}
	var event int64
	var last []byte
	err = q.QueryRowContext(ctx, `SELECT first_seq + n - 1, first_event + n - 1, head FROM decision_bodies ORDER BY first_event DESC LIMIT 1`).
		Scan(&dseq, &event, &last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return seq, hash, 0, nil
	case err != nil:
		return 0, nil, 0, err
	case event > seq:
		seq, hash = event, last
	}
	return seq, hash, dseq, nil
}
