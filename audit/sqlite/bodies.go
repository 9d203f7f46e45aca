package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
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

// A decision_bodies row is its decisions' JSON bodies, each followed by a
// newline, which JSON never holds unescaped. appendBody and splitBodies
// are the format's two sides.

// appendBody appends one body to a row being built.
func appendBody(row, body []byte) []byte { return append(append(row, body...), '\n') }

// splitBodies cuts a decision_bodies row into its bodies; a row not ended
// by a newline keeps its last piece, which then fails to decode.
func splitBodies(row []byte) [][]byte {
	var out [][]byte
	for len(row) > 0 {
		i := bytes.IndexByte(row, '\n')
		if i < 0 {
			return append(out, row)
		}
		out = append(out, row[:i])
		row = row[i+1:]
	}
	return out
}

// nthBody cuts the body of event out of a decision_bodies row that
// begins at event first.
func nthBody(row []byte, first, event int64) ([]byte, error) {
	if bodies := splitBodies(row); event >= first && event-first < int64(len(bodies)) {
		return bodies[event-first], nil
	}
	return nil, fmt.Errorf("the body of the decision at event %d is missing from its decision_bodies row (event %d on): the log is damaged; run ewp-audit verify", event, first)
}

// bodyReader reads the bodies of decisions listed in event order, each
// decision_bodies row once while the listing stays inside it.
type bodyReader struct {
	ctx    context.Context
	q      querier
	first  int64
	bodies [][]byte // the current row, cut
}

func (r *bodyReader) body(event int64) ([]byte, error) {
	if r.bodies == nil || event < r.first || event-r.first >= int64(len(r.bodies)) {
		var row []byte
		err := r.q.QueryRowContext(r.ctx, `SELECT first_event, bodies FROM decision_bodies WHERE first_event <= ? ORDER BY first_event DESC LIMIT 1`, event).
			Scan(&r.first, &row)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		r.bodies = splitBodies(row)
	}
	if event < r.first || event-r.first >= int64(len(r.bodies)) {
		return nil, fmt.Errorf("the body of the decision at event %d is missing (no decision_bodies row holds it): the log is damaged; run ewp-audit verify", event)
	}
	return r.bodies[event-r.first], nil
}
