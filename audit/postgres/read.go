package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

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
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return l.storeErr("list decisions", err)
		}
		d, err := auditchain.DecodeDecision(body)
		if err != nil {
			return l.storeErr("list decisions", err)
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	return l.storeErr("list decisions", rows.Err())
}

func (l *Log) selectSQL(ctx context.Context, q auditchain.Query) (string, []any, error) {
	var where []string
	var args []any
	add := func(cond string, arg ...any) {
		for _, a := range arg {
			args = append(args, a)
			cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(args)), 1)
		}
		where = append(where, cond)
	}
	if !q.Since.IsZero() {
		add("time_ns >= ?", q.Since.UnixNano())
	}
	if !q.Until.IsZero() {
		add("time_ns < ?", q.Until.UnixNano())
	}
	if q.Outcome != "" {
		// A literal, so the planner can use the partial index of pending
		// decisions; it is one of five known words.
		if !auditchain.KnownOutcome(q.Outcome) {
			return "", nil, fmt.Errorf("outcome %q: want MAY_ACT, REQUIRE_CONFIRMATION, DENY, REFUSED or ANSWERED", q.Outcome)
		}
		add("outcome = '" + q.Outcome + "'")
	}
	if q.PropositionID != "" {
		add("proposition_id = ?", b(auditchain.AsJSON(q.PropositionID)))
	}
	if q.ApprovalID != "" {
		add("approval_id = ? AND approval_id <> ''::bytea", b(auditchain.AsJSON(q.ApprovalID)))
	}
	if q.Pending {
		add("outcome = '" + audit.OutcomeRequireConfirmation + "' AND NOT EXISTS (SELECT 1 FROM ewp_audit.approvals a WHERE a.decision_id = d.decision_id)")
	}
	byTime := (!q.Since.IsZero() || !q.Until.IsZero()) && !q.Pending
	order, cmp := "ASC", ">"
	if q.NewestFirst {
		order, cmp = "DESC", "<"
	}
	if q.After != "" {
		var seq, ns int64
		err := l.pool.QueryRow(ctx, `SELECT seq, time_ns FROM ewp_audit.decisions WHERE decision_id = $1`, b(auditchain.AsJSON(q.After))).Scan(&seq, &ns)
		if errors.Is(err, pgx.ErrNoRows) {
			return "", nil, fmt.Errorf("%w: after %s: no such decision to continue from", audit.ErrNotFound, q.After)
		} else if err != nil {
			return "", nil, l.storeErr("list decisions", err)
		}
		if byTime {
			add("(time_ns, seq) "+cmp+" (?, ?)", ns, seq)
		} else {
			add("seq "+cmp+" ?", seq)
		}
	}
	s := "SELECT body FROM ewp_audit.decisions d"
	if len(where) > 0 {
		s += " WHERE " + strings.Join(where, " AND ")
	}
	if byTime {
		s += " ORDER BY time_ns " + order + ", seq " + order
	} else {
		s += " ORDER BY seq " + order
	}
	if q.Limit > 0 {
		args = append(args, q.Limit)
		s += " LIMIT $" + strconv.Itoa(len(args))
	}
	return s, args, nil
}

// Approval returns the approval or rejection recorded under id, or
// audit.ErrNotFound.
func (l *Log) Approval(ctx context.Context, id string) (*audit.Approval, error) {
	var body []byte
	err := l.pool.QueryRow(ctx, `SELECT body FROM ewp_audit.approvals WHERE approval_id = $1`, b(auditchain.AsJSON(id))).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: approval %s is not in %s", audit.ErrNotFound, id, l.url)
	}
	if err != nil {
		return nil, l.storeErr("read approval "+id, err)
	}
	return auditchain.DecodeApproval(body)
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
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, l.storeErr("read approvals", err)
		}
		a, err := auditchain.DecodeApproval(body)
		if err != nil {
			return nil, l.storeErr("read approvals", err)
		}
		out = append(out, *a)
	}
	return out, l.storeErr("read approvals", rows.Err())
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
