package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
)

// querier is a connection pool or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// bodyWhere returns the body of the decision the condition on decisions d
// selects (sql.ErrNoRows when none), with its decision_bodies row found
// in the same query.
func bodyWhere(ctx context.Context, q querier, where string, args ...any) ([]byte, error) {
	var event, first int64
	var bodies []byte
	err := q.QueryRowContext(ctx, `SELECT d.event, b.first_event, b.bodies FROM decisions d
		JOIN decision_bodies b ON b.first_event = (SELECT max(first_event) FROM decision_bodies WHERE first_event <= d.event)
		WHERE `+where, args...).Scan(&event, &first, &bodies)
	if err != nil {
		return nil, err
	}
	return nthBody(bodies, first, event)
}

// decisionBody returns the body of the decision recorded under id (in
// its AsJSON form).
func decisionBody(ctx context.Context, q querier, id string) ([]byte, error) {
	return bodyWhere(ctx, q, `d.decision_id = ?`, id)
}

// nthBody cuts the body of event out of a decision_bodies row that
// begins at event first.
func nthBody(bodies []byte, first, event int64) ([]byte, error) {
	rest := bodies
	for n := event - first; n >= 0; n-- {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		if n == 0 {
			return rest[:i], nil
		}
		rest = rest[i+1:]
	}
	return nil, fmt.Errorf("the body of the decision at event %d is missing from its decision_bodies row (event %d on): the log is damaged; run ewp-audit verify", event, first)
}

// bodyReader reads the bodies of decisions listed in event order, each
// decision_bodies row once while the listing stays inside it.
type bodyReader struct {
	ctx   context.Context
	q     querier
	first int64
	offs  []int // where each body of the row begins, and its end
	row   []byte
}

func (r *bodyReader) body(event int64) ([]byte, error) {
	if r.row == nil || event < r.first || event-r.first >= int64(len(r.offs)-1) {
		if err := r.load(event); err != nil {
			return nil, err
		}
	}
	i := event - r.first
	if i < 0 || i >= int64(len(r.offs)-1) {
		return nil, fmt.Errorf("the body of the decision at event %d is missing (no decision_bodies row holds it): the log is damaged; run ewp-audit verify", event)
	}
	return r.row[r.offs[i] : r.offs[i+1]-1], nil
}

func (r *bodyReader) load(event int64) error {
	err := r.q.QueryRowContext(r.ctx, `SELECT first_event, bodies FROM decision_bodies WHERE first_event <= ? ORDER BY first_event DESC LIMIT 1`, event).
		Scan(&r.first, &r.row)
	if err == sql.ErrNoRows {
		r.row, r.offs = nil, r.offs[:0]
		return fmt.Errorf("the body of the decision at event %d is missing (no decision_bodies row holds it): the log is damaged; run ewp-audit verify", event)
	}
	if err != nil {
		return err
	}
	r.offs = append(r.offs[:0], 0)
	for i, c := range r.row {
		if c == '\n' {
			r.offs = append(r.offs, i+1)
		}
	}
	return nil
}
