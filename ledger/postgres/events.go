package postgres

import (
	"context"

	"github.com/ewp-go/ewp/chain"
)

// eventsSQL lists events with their rows, a page at a time.
const eventsSQL = `
SELECT e.seq, e.tbl, e.row_seq, e.hash,
       COALESCE(s.created_at, p.created_at), COALESCE(s.body, p.body),
       s.proposition_id, s.view_id, p.primitive_id, p.name_fold
FROM events e
LEFT JOIN snapshots s ON e.tbl = 'snapshots' AND s.seq = e.row_seq
LEFT JOIN primitive_revisions p ON e.tbl = 'primitive_revisions' AND p.seq = e.row_seq
WHERE e.seq > $1 ORDER BY e.seq LIMIT $2`

// Events returns up to limit events after sequence number after, oldest
// first, each with the row it records: what a copy to another store
// replays.
func (l *Ledger) Events(ctx context.Context, after int64, limit int) ([]chain.Event, error) {
	rows, err := l.pool.Query(ctx, eventsSQL, after, limit)
	if err != nil {
		return nil, ledgerErr("read events", err)
	}
	defer rows.Close()
	var out []chain.Event
	for rows.Next() {
		var e chain.Event
		var created *string
		var prop, view, prim, fold []byte
		if err := rows.Scan(&e.Seq, &e.Table, &e.RowSeq, &e.Hash, &created, &e.Body, &prop, &view, &prim, &fold); err != nil {
			return nil, ledgerErr("read events", err)
		}
		if created != nil {
			e.CreatedAt = *created
		}
		e.PropositionID, e.ViewID, e.PrimitiveID, e.NameFold = string(prop), string(view), string(prim), string(fold)
		out = append(out, e)
	}
	return out, ledgerErrOrNil("read events", rows.Err())
}
