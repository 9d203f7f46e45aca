package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

// Decision returns the decision recorded under id, or audit.ErrNotFound.
func (l *Log) Decision(ctx context.Context, id string) (*audit.Decision, error) {
	return l.oneDecision(ctx, "decision "+id, `SELECT body FROM ewp_audit.decisions WHERE decision_id = $1`, b(auditchain.AsJSON(id)))
}

// ByIdempotencyKey returns the decision recorded under (credential, key),
// or audit.ErrNotFound.
func (l *Log) ByIdempotencyKey(ctx context.Context, credential, key string) (*audit.Decision, error) {
	return l.oneDecision(ctx, fmt.Sprintf("idempotency_key %q of credential %q", key, credential),
		`SELECT body FROM ewp_audit.decisions WHERE credential = $1 AND idem_key = $2`, b(auditchain.AsJSON(credential)), b(auditchain.AsJSON(key)))
}

func (l *Log) oneDecision(ctx context.Context, what, query string, args ...any) (*audit.Decision, error) {
	var body []byte
	err := l.pool.QueryRow(ctx, query, args...).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s is not in %s", audit.ErrNotFound, what, l.url)
	}
	if err != nil {
		return nil, l.storeErr("read "+what, err)
	}
	return auditchain.DecodeDecision(body)
}

// List returns a page of decisions as the SQLite log's List does (same
// order, filters and paging).
func (l *Log) List(ctx context.Context, f audit.Filter) ([]audit.Decision, error) {
	if f.Limit <= 0 {
		f.Limit = auditchain.DefaultLimit
	}
	var out []audit.Decision
	err := l.Each(ctx, auditchain.Query{Filter: f}, func(d *audit.Decision) error {
		out = append(out, *d)
		return nil
	})
	return out, err
}

// Each calls fn with every decision q selects, streaming the rows of one
// query; a zero Limit means all. An error from fn stops the walk.
func (l *Log) Each(ctx context.Context, q auditchain.Query, fn func(*audit.Decision) error) error {
	query, args, err := l.selectSQL(ctx, q)
	if err != nil {
		return err
	}
	rows, err := l.pool.Query(ctx, query, args...)
	if err != nil {
		return l.storeErr("list decisions", err)
	}
	defer rows.Close()
	return auditchain.EachBody(rows, auditchain.DecodeDecision, fn, func(err error) error { return l.storeErr("list decisions", err) })
}

// listSQL is the listing query as PostgreSQL spells it.
var listSQL = auditchain.ListSQL{
	Decisions: "ewp_audit.decisions", Approvals: "ewp_audit.approvals", EmptyID: "''::bytea",
	Column: "body", Placeholder: auditchain.Dollar, Bind: func(id string) any { return b(id) },
}

func (l *Log) selectSQL(ctx context.Context, q auditchain.Query) (string, []any, error) {
	return listSQL.Select(q, func(id any) (key any, found bool, err error) {
		var seq int64
		err = l.pool.QueryRow(ctx, `SELECT seq FROM ewp_audit.decisions WHERE decision_id = $1`, id).Scan(&seq)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, false, nil
		}
		return seq, err == nil, l.storeErr("list decisions", err)
	})
}

// Approval returns the approval or rejection recorded under id, or
// audit.ErrNotFound, provided the chain vouches for it: its event records
// exactly this row and body (auditchain.ChainedApproval; an approval
// inserted behind the chain or edited after is refused with
// audit.ErrApprovalNotOnChain). The event is found through events_rows,
// an index of the events of approvals and uses only.
func (l *Log) Approval(ctx context.Context, id string) (*audit.Approval, error) {
	var row auditchain.ApprovalRow
	var aID, dID []byte
	var payload *string
	var prev, hash []byte
	err := l.pool.QueryRow(ctx, `SELECT a.seq, a.approval_id, a.decision_id, a.verdict, a.created_ns, a.body, a.body_sha256,
		e.payload, e.prev_hash, e.hash
		FROM ewp_audit.approvals a LEFT JOIN ewp_audit.events e ON e.tbl = 'approvals' AND e.row_seq = a.seq
		WHERE a.approval_id = $1 ORDER BY e.seq LIMIT 1`, b(auditchain.AsJSON(id))).
		Scan(&row.Seq, &aID, &dID, &row.Verdict, &row.CreatedNS, &row.Body, &row.BodySum, &payload, &prev, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: approval %s is not in %s", audit.ErrNotFound, id, l.url)
	}
	if err != nil {
		return nil, l.storeErr("read approval "+id, err)
	}
	row.ApprovalID, row.DecisionID = string(aID), string(dID)
	ev := auditchain.ChainEntry{Found: payload != nil, Prev: prev, Hash: hash}
	if payload != nil {
		ev.Payload = *payload
	}
	return auditchain.ChainedApproval(id, &row, ev)
}

// ApprovalsFor lists the answers to a decision (at most one), oldest
// first.
func (l *Log) ApprovalsFor(ctx context.Context, decisionID string) ([]audit.Approval, error) {
	rows, err := l.pool.Query(ctx, `SELECT body FROM ewp_audit.approvals WHERE decision_id = $1 ORDER BY seq`, b(auditchain.AsJSON(decisionID)))
	if err != nil {
		return nil, l.storeErr("read approvals", err)
	}
	defer rows.Close()
	var out []audit.Approval
	err = auditchain.EachBody(rows, auditchain.DecodeApproval, func(a *audit.Approval) error {
		out = append(out, *a)
		return nil
	}, func(err error) error { return l.storeErr("read approvals", err) })
	return out, err
}

// UseOf returns the consumption of a single-use approval, or
// audit.ErrNotFound while it is unused.
func (l *Log) UseOf(ctx context.Context, approvalID string) (*auditchain.Use, error) {
	u := &auditchain.Use{}
	var appr, by []byte
	err := l.pool.QueryRow(ctx, `SELECT seq, approval_id, used_by, used_ns FROM ewp_audit.approval_uses WHERE approval_id = $1`, b(auditchain.AsJSON(approvalID))).
		Scan(&u.Seq, &appr, &by, &u.UsedNS)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: approval %s is unused", audit.ErrNotFound, approvalID)
	}
	if err != nil {
		return nil, l.storeErr("read approval use", err)
	}
	u.ApprovalID, u.UsedBy = string(appr), string(by)
	return u, nil
}

// Head returns the chain's last event; Seq 0 and Hash "" for an empty log.
func (l *Log) Head(ctx context.Context) (audit.Head, error) {
	var h audit.Head
	var sum []byte
	err := l.pool.QueryRow(ctx, `SELECT seq, hash FROM ewp_audit.events ORDER BY seq DESC LIMIT 1`).Scan(&h.Seq, &sum)
	if errors.Is(err, pgx.ErrNoRows) {
		return audit.Head{}, nil
	}
	if err != nil {
		return audit.Head{}, l.storeErr("read chain head", err)
	}
	h.Hash = hex.EncodeToString(sum)
	return h, nil
}
