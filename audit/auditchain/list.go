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
	// Numbered placeholders ($1, $2, …) instead of ?.
	Numbered bool
	// Bind turns an ID's canonical JSON into the value its column takes.
	Bind func(asJSON string) any
	// Column is what the query selects of each decision; "" means body.
	// The SQLite log keeps bodies apart and selects the event number.
	Column string
}

// Seek finds the decision a page continues from: its seq, or found false
// when there is none.
type Seek func(decisionID any) (key any, found bool, err error)

// Select builds the query of the decisions q selects (their Column) and
// its arguments. They come in recording order (seq), which the table and
// the pending index keep, so no query sorts (and export streams), and a
// reader following the log with After never skips a decision recorded
// after one it has seen; a time window selects, it does not reorder. Since is inclusive, Until
// exclusive; a zero Limit means all. Filters by proposition or outcome
// scan the decisions: they are an operator's queries.
func (s ListSQL) Select(q Query, seek Seek) (string, []any, error) {
	var where []string
	var args []any
	add := func(cond string, arg ...any) {
		for _, a := range arg {
			args = append(args, a)
			if s.Numbered {
				cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(args)), 1)
			}
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
		// A literal, not a parameter, so the planner can use the partial
		// index of pending decisions; it is one of five known words.
		if !q.Outcome.Valid() {
			return "", nil, fmt.Errorf("outcome %q: want MAY_ACT, REQUIRE_CONFIRMATION, DENY, REFUSED or ANSWERED", q.Outcome)
		}
		add("outcome = '" + string(q.Outcome) + "'")
	}
	if q.PropositionID != "" {
		add("proposition_id = ?", s.Bind(AsJSON(q.PropositionID)))
	}
	if q.ApprovalID != "" {
		// The literal term lets the planner use the partial index.
		add("approval_id = ? AND approval_id <> "+s.EmptyID, s.Bind(AsJSON(q.ApprovalID)))
	}
	if q.Pending {
		add("outcome = '" + string(audit.OutcomeRequireConfirmation) + "' AND NOT EXISTS (SELECT 1 FROM " + s.Approvals + " a WHERE a.decision_id = d.decision_id)")
	}
	const order = "seq"
	dir, cmp := "ASC", ">"
	if q.NewestFirst {
		dir, cmp = "DESC", "<"
	}
	if q.After != "" {
		key, found, err := seek(s.Bind(AsJSON(q.After)))
		if err != nil {
			return "", nil, err
		}
		if !found {
			return "", nil, fmt.Errorf("%w: after %s: no such decision to continue from", audit.ErrNotFound, q.After)
		}
		add("d."+order+" "+cmp+" ?", key)
	}
	col := s.Column
	if col == "" {
		col = "body"
	}
	query := "SELECT " + col + " FROM " + s.Decisions + " d"
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY d." + order + " " + dir
	if q.Limit > 0 {
		args = append(args, q.Limit)
		if s.Numbered {
			query += " LIMIT $" + strconv.Itoa(len(args))
		} else {
			query += " LIMIT ?"
		}
	}
	return query, args, nil
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
