package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// currentPrimitivesSQL orders primitives by their first revision: the
// grounding engine walks edges in graph insertion order (GROUNDING.md
// §2.9), so the order rows come back in is part of the answer.
const currentPrimitivesSQL = `
SELECT p.primitive_id, p.name_fold, p.body, p.seq FROM primitive_revisions p
JOIN (SELECT primitive_id, MAX(seq) AS seq, MIN(seq) AS first FROM primitive_revisions GROUP BY primitive_id) c ON p.seq = c.seq
ORDER BY c.first`

// AppendPrimitives appends graph revisions. validate runs inside the write
// transaction against the current graph (the latest revision of each
// primitive) and returns the rows to append, so a check like "no two
// primitives share a name" cannot race another writer. Either every row is
// appended or none. A returned row identical to its primitive's current
// revision is skipped: re-loading the same graph adds no history.
func (l *Ledger) AppendPrimitives(ctx context.Context, validate func(current []ledger.PrimitiveRow) ([]ledger.PrimitiveRow, error)) error {
	return l.write(ctx, func(w *wtx) error {
		cur, err := queryPrimitives(ctx, w.tx, currentPrimitivesSQL)
		if err != nil {
			return err
		}
		rows, err := validate(cur)
		if err != nil {
			return err
		}
		byID := make(map[string]ledger.PrimitiveRow, len(cur))
		for _, r := range cur {
			byID[r.ID] = r
		}
		for i, r := range rows {
			if err := checkPrimitive(i, r); err != nil {
				return err
			}
			if old, ok := byID[r.ID]; ok && old.NameFold == r.NameFold && bytes.Equal(old.Body, r.Body) {
				continue
			}
			if err := w.insertPrimitive(r); err != nil {
				return err
			}
			byID[r.ID] = r
		}
		return nil
	})
}

func checkPrimitive(i int, r ledger.PrimitiveRow) error {
	if r.ID == "" {
		return fmt.Errorf("primitive row %d: empty primitive id", i)
	}
	if !json.Valid(r.Body) {
		return fmt.Errorf("primitive row %d (%s): body is not valid JSON", i, r.ID)
	}
	return nil
}

func (w *wtx) insertPrimitive(r ledger.PrimitiveRow) error {
	w.primSeq++
	_, err := w.tx.ExecContext(w.ctx, `INSERT INTO primitive_revisions (seq, primitive_id, name_fold, body, created_at) VALUES (?, ?, ?, ?, ?)`,
		w.primSeq, r.ID, r.NameFold, r.Body, w.now)
	if err != nil {
		return ledgerErr("insert primitive revision", err)
	}
	w.event(tablePrimitives, w.primSeq, primitiveEvent(w.primSeq, r.ID, r.NameFold, r.Body, w.now))
	return nil
}

// CurrentPrimitives returns the latest revision of every primitive, in the
// order the primitives were first added.
func (l *Ledger) CurrentPrimitives(ctx context.Context) ([]ledger.PrimitiveRow, error) {
	return queryPrimitives(ctx, l.r, currentPrimitivesSQL)
}

// GraphVersion is the sequence number of the newest graph revision (0 for
// none). It only grows, so a reader can cache the graph and reload it when
// the version changes.
func (l *Ledger) GraphVersion(ctx context.Context) (int64, error) {
	var v int64
	err := l.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM primitive_revisions`).Scan(&v)
	return v, ledgerErrOrNil("read graph version", err)
}

// PrimitivesSince returns every revision appended after version seq,
// oldest first (several revisions of one primitive included). A reader that
// holds the graph at version seq applies them in order to catch up without
// re-reading the whole graph; the last row's Seq is the version reached.
func (l *Ledger) PrimitivesSince(ctx context.Context, seq int64) ([]ledger.PrimitiveRow, error) {
	return queryPrimitives(ctx, l.r, `SELECT primitive_id, name_fold, body, seq FROM primitive_revisions WHERE seq > ? ORDER BY seq`, seq)
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func queryPrimitives(ctx context.Context, q querier, query string, args ...any) ([]ledger.PrimitiveRow, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, ledgerErr("read primitives", err)
	}
	defer rows.Close()
	var out []ledger.PrimitiveRow
	for rows.Next() {
		var r ledger.PrimitiveRow
		if err := rows.Scan(&r.ID, &r.NameFold, &r.Body, &r.Seq); err != nil {
			return nil, ledgerErr("read primitives", err)
		}
		out = append(out, r)
	}
	return out, ledgerErrOrNil("read primitives", rows.Err())
}
