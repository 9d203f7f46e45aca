package sqlite

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/ewp-go/ewp/snapshot"
)

// pending holds rows a write transaction has decided on but not yet sent
// to SQLite. Sending them in multi-row INSERTs matters on a large load:
// per statement, database/sql and the VDBE cost more than the B-tree
// insert itself. Nothing in a transaction reads a pending row back (what
// it stored is answered from propState), and write flushes everything
// before it commits.
type pending struct {
	snaps   []snapRow
	events  []chainRow
	records []recordRow
	fts     [][3]string
}

type snapRow struct {
	seq        int64
	prop, view string
	body       []byte
	sum, canon [32]byte
}

type chainRow struct {
	seq, rowSeq int64
	tbl         string
	payload     []byte
	prev, hash  []byte
}

type recordRow struct {
	prop, kind, id, view string
	sum                  snapshot.Sum
}

// Rows per multi-row INSERT. Snapshots carry kilobytes of body each, so
// fewer of them go together; FTS text goes as one JSON array because FTS5
// writes its pending terms out at every statement boundary.
const (
	snapBatch   = 32
	eventBatch  = 64
	recordBatch = 128
	ftsBatch    = 4096
)

type table struct {
	name, cols string
	n          int // columns
}

var (
	snapTable   = table{"snapshots", "seq, proposition_id, view_id, body, body_sha256, canonical_sha256, created_at", 7}
	eventTable  = table{"events", "seq, tbl, row_seq, payload, prev_hash, hash", 6}
	recordTable = table{"records", "proposition_id, kind, record_id, sum, view_id", 5}
)

const ftsInsert = `INSERT INTO assertion_fts (text, proposition_id, assertion_id)
	SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?)`

// flushFull sends every buffer that has reached its batch size.
func (w *wtx) flushFull() error {
	if len(w.pend.snaps) >= snapBatch || len(w.pend.events) >= eventBatch || len(w.pend.records) >= recordBatch || len(w.pend.fts) >= ftsBatch {
		return w.flush(false)
	}
	return nil
}

// flush sends full batches, or everything when all is set.
func (w *wtx) flush(all bool) error {
	var err error
	w.pend.snaps, err = flushRows(w, snapTable, w.pend.snaps, snapBatch, all, func(r snapRow) []any {
		return []any{r.seq, r.prop, r.view, r.body, r.sum[:], r.canon[:], w.now}
	})
	if err == nil {
		w.pend.events, err = flushRows(w, eventTable, w.pend.events, eventBatch, all, func(r chainRow) []any {
			return []any{r.seq, r.tbl, r.rowSeq, string(r.payload), r.prev, r.hash}
		})
	}
	if err == nil {
		w.pend.records, err = flushRows(w, recordTable, w.pend.records, recordBatch, all, func(r recordRow) []any {
			return []any{r.prop, r.kind, r.id, r.sum[:], r.view}
		})
	}
	if err == nil && (all || len(w.pend.fts) >= ftsBatch) && len(w.pend.fts) > 0 {
		_, err = w.tx.ExecContext(w.ctx, ftsInsert, string(mustJSON(w.pend.fts)))
		w.pend.fts = w.pend.fts[:0]
	}
	return ledgerErrOrNil("write", err)
}

// flushRows inserts rows batch at a time and returns what is left (less
// than a batch, unless all).
func flushRows[R any](w *wtx, t table, rows []R, batch int, all bool, args func(R) []any) ([]R, error) {
	for len(rows) >= batch || (all && len(rows) > 0) {
		n := min(len(rows), batch)
		st, err := w.insertStmt(t, n)
		if err != nil {
			return rows, err
		}
		vals := make([]any, 0, n*t.n)
		for _, r := range rows[:n] {
			vals = append(vals, args(r)...)
		}
		if _, err := st.ExecContext(w.ctx, vals...); err != nil {
			return rows, fmt.Errorf("insert into %s: %w", t.name, err)
		}
		rows = rows[n:]
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return rows, nil
}

// insertStmt prepares (once per transaction) an INSERT of n rows.
func (w *wtx) insertStmt(t table, n int) (*sql.Stmt, error) {
	key := fmt.Sprintf("%s/%d", t.name, n)
	if st, ok := w.bulk[key]; ok {
		return st, nil
	}
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", t.n), ", ") + ")"
	q := "INSERT INTO " + t.name + " (" + t.cols + ") VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	st, err := w.tx.PrepareContext(w.ctx, q)
	if err != nil {
		return nil, err
	}
	w.bulk[key] = st
	return st, nil
}
