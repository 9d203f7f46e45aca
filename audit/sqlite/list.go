package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ewp-go/ewp/audit"
)

// eachBody is Each for a query that may select decisions without a
// decisions row: it walks the decision_bodies rows in recording order
// (first_event; backwards for NewestFirst), one row in memory at a time,
// and filters each decoded body as the listing query of the rows does:
// Since inclusive and Until exclusive on the decision's time, Outcome,
// PropositionID, and After (exclusive) by seq.
func (l *Log) eachBody(ctx context.Context, q Query, fn func(*audit.Decision) error) error {
	if q.Outcome != "" && !q.Outcome.Valid() {
		return fmt.Errorf("outcome %q: want MAY_ACT, REQUIRE_CONFIRMATION, DENY, REFUSED or ANSWERED", q.Outcome)
	}
	fail := func(err error) error { return l.storeErr("list decisions", err) }
	tx, err := l.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	w := bodyWalk{q: q, fn: fn, fail: fail, prop: asJSON(q.PropositionID)}
	// Rows from the one holding After on (or back), else all.
	query, from := `SELECT first_seq, bodies FROM decision_bodies WHERE first_event >= ? ORDER BY first_event`, int64(0)
	if q.NewestFirst {
		query, from = `SELECT first_seq, bodies FROM decision_bodies WHERE first_event <= ? ORDER BY first_event DESC`, math.MaxInt64
	}
	if q.After != "" {
		f, err := findDecision(ctx, tx, asJSON(q.After))
		if errors.Is(err, errNoDecision) {
			return fmt.Errorf("%w: after %s: no such decision to continue from", audit.ErrNotFound, q.After)
		}
		if err != nil {
			return fail(err)
		}
		w.after, from = f.seq, f.first
	}
	rows, err := tx.QueryContext(ctx, query, from)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var firstSeq int64
		var raw []byte
		if err := rows.Scan(&firstSeq, &raw); err != nil {
			return fail(err)
		}
		done, err := w.row(firstSeq, splitBodies(raw))
		if done || err != nil {
			return err
		}
	}
	return fail(rows.Err())
}

// bodyWalk is the state of eachBody's walk.
type bodyWalk struct {
	q     Query
	fn    func(*audit.Decision) error
	fail  func(error) error // names the store; fn's errors pass as they are
	prop  string            // q.PropositionID as its column holds it
	after int64             // the seq of q.After, when set
	sent  int
}

// row hands fn the decisions of one decision_bodies row that the query
// selects; done once the Limit is reached.
func (w *bodyWalk) row(firstSeq int64, bodies [][]byte) (done bool, err error) {
	idx := make([]int, len(bodies))
	for i := range idx {
		idx[i] = i
	}
	if w.q.NewestFirst {
		slices.Reverse(idx)
	}
	for _, i := range idx {
		seq := firstSeq + int64(i)
		if w.q.After != "" && ((!w.q.NewestFirst && seq <= w.after) || (w.q.NewestFirst && seq >= w.after)) {
			continue
		}
		d, err := decodeDecision(bodies[i])
		if err != nil {
			return true, w.fail(err)
		}
		if !w.selects(d) {
			continue
		}
		if err := w.fn(d); err != nil {
			return true, err
		}
		w.sent++
		if w.q.Limit > 0 && w.sent >= w.q.Limit {
			return true, nil
		}
	}
	return false, nil
}

// selects applies the query's filters to a decision, comparing what its
// columns would hold (auditchain.DecisionColumns).
func (w *bodyWalk) selects(d *audit.Decision) bool {
	t := d.Time.UnixNano()
	switch {
	case !w.q.Since.IsZero() && t < w.q.Since.UnixNano():
		return false
	case !w.q.Until.IsZero() && t >= w.q.Until.UnixNano():
		return false
	case w.q.Outcome != "" && audit.Outcome(asJSON(string(d.Outcome))) != w.q.Outcome:
		return false
	case w.q.PropositionID != "" && asJSON(d.PropositionID) != w.prop:
		return false
	}
	return true
}
