package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"unicode/utf8"
)

// querier is a connection pool or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// errNoDecision is findDecision's answer for an id not in the log.
var errNoDecision = sql.ErrNoRows

// found is a decision findDecision found: its body, its seq and event,
// and the first event of the decision_bodies row holding it.
type found struct {
	body              []byte
	seq, event, first int64
}

// rowWhere finds the decision whose decisions row d the condition
// selects (sql.ErrNoRows when none), with its decision_bodies row found
// in the same query.
func rowWhere(ctx context.Context, q querier, where string, args ...any) (found, error) {
	var f found
	var bodies []byte
	err := q.QueryRowContext(ctx, `SELECT d.seq, d.event, b.first_event, b.bodies FROM decisions d
		JOIN decision_bodies b ON b.first_event = (SELECT max(first_event) FROM decision_bodies WHERE first_event <= d.event)
		WHERE `+where, args...).Scan(&f.seq, &f.event, &f.first, &bodies)
	if err == nil {
		f.body, err = nthBody(bodies, f.first, f.event)
	}
	return f, err
}

// findDecision finds the decision recorded under id (in its AsJSON form),
// or errNoDecision: through its decisions row if it is special, else
// through the one decision_bodies row whose range of in-order ids holds
// it, and the body in that row that names it. A body found there is in
// order in its row: no decisions row had its id.
func findDecision(ctx context.Context, q querier, id string) (found, error) {
	f, err := rowWhere(ctx, q, `d.decision_id = ?`, id)
	if !errors.Is(err, sql.ErrNoRows) {
		return f, err
	}
	var bodies []byte
	var firstSeq int64
	var lastID string
	err = q.QueryRowContext(ctx, `SELECT first_event, first_seq, last_id, bodies FROM decision_bodies
		WHERE first_id IS NOT NULL AND first_id <= ? ORDER BY first_id DESC LIMIT 1`, id).Scan(&f.first, &firstSeq, &lastID, &bodies)
	if err != nil {
		return f, err // errNoDecision when no row's range begins at or before id
	}
	if id > lastID {
		return f, errNoDecision
	}
	for i, body := range splitBodies(bodies) {
		match, err := bodyNames(body, id)
		if err != nil {
			return f, err
		}
		if match {
			f.body, f.seq, f.event = body, firstSeq+int64(i), f.first+int64(i)
			return f, nil
		}
	}
	return f, errNoDecision
}

// bodyNames reports whether a decision's body has decision_id id (its
// AsJSON form, as the body reads back). Bodies begin with their
// decision_id (auditchain.MarshalDecision), so the id is read from that
// first string without decoding the rest: a body without a backslash in
// it and valid UTF-8 reads back as it is written; any other is decoded.
func bodyNames(body []byte, id string) (bool, error) {
	const prefix = `{"decision_id":"`
	if rest, ok := bytes.CutPrefix(body, []byte(prefix)); ok {
		if end := bytes.IndexAny(rest, "\\\""); end >= 0 && rest[end] == '"' && utf8.Valid(rest[:end]) {
			return string(rest[:end]) == id, nil
		}
	}
	d, err := decodeDecision(body)
	if err != nil {
		return false, err
	}
	return asJSON(d.ID) == id, nil
}

// decisionBody returns the body of the decision recorded under id (in
// its AsJSON form).
func decisionBody(ctx context.Context, q querier, id string) ([]byte, error) {
	f, err := findDecision(ctx, q, id)
	return f.body, err
}

// lastInOrder is the greatest in-order decision_id of the log: the last
// one recorded in order, "" when there is none.
func lastInOrder(ctx context.Context, q querier) (string, error) {
	var id string
	err := q.QueryRowContext(ctx, `SELECT last_id FROM decision_bodies WHERE last_id IS NOT NULL ORDER BY first_event DESC LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
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
