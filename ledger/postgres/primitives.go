package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/chain"
	"github.com/ewp-go/ewp/ledger"
)

// currentPrimitivesSQL orders primitives by their first revision, as the
// SQLite ledger does (the grounding engine walks edges in insertion order).
const currentPrimitivesSQL = `
SELECT p.primitive_id, p.name_fold, p.body, p.seq FROM primitive_revisions p
JOIN (SELECT primitive_id, MAX(seq) AS seq, MIN(seq) AS first FROM primitive_revisions GROUP BY primitive_id) c ON p.seq = c.seq
ORDER BY c.first`

// AppendPrimitives appends graph revisions with the SQLite ledger's rules:
// validate runs under the chain lock against the current graph and
// returns the rows to append, all or none; a row identical to its
// primitive's current revision is skipped.
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
			if r.ID == "" {
				return fmt.Errorf("primitive row %d: empty primitive id", i)
			}
			if !json.Valid(r.Body) {
				return fmt.Errorf("primitive row %d (%s): body is not valid JSON", i, r.ID)
			}
			if old, ok := byID[r.ID]; ok && old.NameFold == r.NameFold && bytes.Equal(old.Body, r.Body) {
				continue
			}
			w.primSeq++
			_, err := w.tx.Exec(ctx, `INSERT INTO primitive_revisions (seq, primitive_id, name_fold, body, created_at) VALUES ($1, $2, $3, $4, $5)`,
				w.primSeq, []byte(r.ID), []byte(r.NameFold), r.Body, w.now)
			if err != nil {
				return ledgerErr("insert primitive revision", err)
			}
			w.event(chain.TablePrimitives, w.primSeq, chain.PrimitivePayload(w.primSeq, r.ID, r.NameFold, r.Body, w.now))
			byID[r.ID] = r
		}
		return nil
	})
}

// CurrentPrimitives returns the latest revision of every primitive, in the
// order the primitives were first added.
func (l *Ledger) CurrentPrimitives(ctx context.Context) ([]ledger.PrimitiveRow, error) {
	return queryPrimitives(ctx, l.pool, currentPrimitivesSQL)
}

// GraphVersion is the sequence number of the newest graph revision.
func (l *Ledger) GraphVersion(ctx context.Context) (int64, error) {
	var v int64
	err := l.pool.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM primitive_revisions`).Scan(&v)
	return v, ledgerErrOrNil("read graph version", err)
}

// PrimitivesSince returns every revision appended after version seq,
// oldest first.
func (l *Ledger) PrimitivesSince(ctx context.Context, seq int64) ([]ledger.PrimitiveRow, error) {
	return queryPrimitives(ctx, l.pool, `SELECT primitive_id, name_fold, body, seq FROM primitive_revisions WHERE seq > $1 ORDER BY seq`, seq)
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func queryPrimitives(ctx context.Context, q querier, query string, args ...any) ([]ledger.PrimitiveRow, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, ledgerErr("read primitives", err)
	}
	defer rows.Close()
	var out []ledger.PrimitiveRow
	for rows.Next() {
		var r ledger.PrimitiveRow
		var id, fold []byte
		if err := rows.Scan(&id, &fold, &r.Body, &r.Seq); err != nil {
			return nil, ledgerErr("read primitives", err)
		}
		r.ID, r.NameFold = string(id), string(fold)
		out = append(out, r)
	}
	return out, ledgerErrOrNil("read primitives", rows.Err())
}
