package auditchain

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/audit"
)

// ListSQL is what the listing query of a store spells its own way; the
// query itself (filters, order, paging) is the same on both.
type ListSQL struct {
	// Decisions and Approvals name the tables.
	Decisions, Approvals string
	// EmptyID is the literal of an empty approval_id column.
	EmptyID string
	// Placeholder is the dialect's parameter n (from 1): Question or Dollar.
	Placeholder func(n int) string
	// Bind turns an ID's canonical JSON into the value its column takes.
	Bind func(asJSON string) any
	// Column is what the query selects of each decision: its body, or
	// (the SQLite log, which keeps bodies apart) its event number.
	Column string
}

// Question is SQLite's placeholder: ? whatever its number.
func Question(int) string { return "?" }

// Dollar is PostgreSQL's placeholder: $n.
func Dollar(n int) string { return "$" + strconv.Itoa(n) }

// Seek finds the decision a page continues from: its seq, or found false
// when there is none.
type Seek func(decisionID any) (key any, found bool, err error)

// Select builds the query of the decisions q selects (their Column) and
// its arguments. They come in recording order (seq), which the table and
// the pending index keep, so no query sorts (and export streams), and a
// reader following the log with After never skips a decision recorded
// after one it has seen; a time window selects, it does not reorder.
// Since is inclusive, Until exclusive; a zero Limit means all. Filters by
// proposition or outcome scan the decisions: they are an operator's
// queries.
func (s ListSQL) Select(q Query, seek Seek) (string, []any, error) {
	var where []string
	var vals []any
	// arg adds a parameter and returns its placeholder.
	arg := func(v any) string {
		vals = append(vals, v)
		return s.Placeholder(len(vals))
	}
	if !q.Since.IsZero() {
		where = append(where, "time_ns >= "+arg(q.Since.UnixNano()))
	}
	if !q.Until.IsZero() {
		where = append(where, "time_ns < "+arg(q.Until.UnixNano()))
	}
	if q.Outcome != "" {
		// A literal, not a parameter, so the planner can use the partial
		// index of pending decisions; it is one of five known words.
		if !q.Outcome.Valid() {
			return "", nil, fmt.Errorf("outcome %q: want MAY_ACT, REQUIRE_CONFIRMATION, DENY, REFUSED or ANSWERED", q.Outcome)
		}
		where = append(where, "outcome = '"+string(q.Outcome)+"'")
	}
	if q.PropositionID != "" {
		where = append(where, "proposition_id = "+arg(s.Bind(AsJSON(q.PropositionID))))
	}
	if q.ApprovalID != "" {
		// The literal term lets the planner use the partial index.
		where = append(where, "approval_id = "+arg(s.Bind(AsJSON(q.ApprovalID)))+" AND approval_id <> "+s.EmptyID)
	}
	if q.Pending {
		where = append(where, "outcome = '"+string(audit.OutcomeRequireConfirmation)+"' AND NOT EXISTS (SELECT 1 FROM "+s.Approvals+" a WHERE a.decision_id = d.decision_id)")
	}
	dir, cmp := "ASC", " > "
	if q.NewestFirst {
		dir, cmp = "DESC", " < "
	}
	if q.After != "" {
		key, found, err := seek(s.Bind(AsJSON(q.After)))
		if err != nil {
			return "", nil, err
		}
		if !found {
			return "", nil, fmt.Errorf("%w: after %s: no such decision to continue from", audit.ErrNotFound, q.After)
		}
		where = append(where, "d.seq"+cmp+arg(key))
	}
	query := "SELECT " + s.Column + " FROM " + s.Decisions + " d"
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY d.seq " + dir
	if q.Limit > 0 {
		query += " LIMIT " + arg(q.Limit)
	}
	return query, vals, nil
}

// Rows is what both drivers' result sets offer.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// EachBody decodes the body column of every row and calls fn with it. A
// failure to read or decode a row goes through fail (which names the
// store and what it was reading; it is also handed the rows' final
// error, nil or not); an error from fn stops the walk and is returned as
// it is.
func EachBody[T any](rows Rows, decode func([]byte) (*T, error), fn func(*T) error, fail func(error) error) error {
	return EachBodyFrom(rows, func() ([]byte, error) {
		var body []byte
		err := rows.Scan(&body)
		return body, err
	}, decode, fn, fail)
}

// EachBodyFrom is EachBody for rows that do not hold the body itself:
// body reads the current row's (the SQLite log selects an event number
// and finds the body in its decision_bodies row).
func EachBodyFrom[T any](rows Rows, body func() ([]byte, error), decode func([]byte) (*T, error), fn func(*T) error, fail func(error) error) error {
	for rows.Next() {
		b, err := body()
		if err != nil {
			return fail(err)
		}
		v, err := decode(b)
		if err != nil {
			return fail(err)
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	return fail(rows.Err())
}
