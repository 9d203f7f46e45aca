package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ewp-go/ewp/audit/auditchain"
)

// A log whose append-only triggers are gone, or whose last entries no
// longer hash to what the chain recorded, is refused: at open (the server
// does not start on it, ewp-audit does not approve into it) and by the
// writer whenever the file's schema changed since it last looked (PRAGMA
// schema_version moves on every DROP or CREATE, so a trigger dropped by
// another process is seen by the next commit, at the cost of one pragma
// per batch). Only Verify walks the whole chain; these checks cost a few
// point reads and the newest decision_bodies row.

// tailQuerier is what the tail check reads through: the read pool or a
// write transaction.
type tailQuerier interface {
	querier
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// checkLog refuses a broken log: the triggers, then the tail.
func checkLog(ctx context.Context, q tailQuerier) error {
	ext, err := hasAgentTables(ctx, q)
	var brk *Break
	if err == nil {
		brk, err = triggersBreak(ctx, q, triggers(ext))
	}
	if err == nil && brk == nil {
		brk, err = tailBreak(ctx, q, ext)
	}
	if err != nil {
		return fmt.Errorf("check the log's tail and triggers: %w", err)
	}
	if brk != nil {
		return auditchain.BrokenLog(brk.Error())
	}
	return nil
}

// triggersBreak checks the file's triggers against want, name to
// definition: each there, unaltered, and no other.
func triggersBreak(ctx context.Context, q tailQuerier, want map[string]string) (*Break, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	check := auditchain.NewTriggers(want)
	for rows.Next() {
		var name, tbl, ddl string
		if err := rows.Scan(&name, &tbl, &ddl); err != nil {
			return nil, err
		}
		if brk := check.Found(name, tbl, ddl); brk != nil {
			return brk, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return check.Missing(), nil
}

// tailBreak checks the last events row (an approval or a use) and the
// last decision_bodies row (the newest decisions, every body in it).
func tailBreak(ctx context.Context, q tailQuerier, ext bool) (*Break, error) {
	if brk, err := lastEventBreak(ctx, q, ext); brk != nil || err != nil {
		return brk, err
	}
	return lastBodiesBreak(ctx, q)
}

func lastEventBreak(ctx context.Context, q tailQuerier, ext bool) (*Break, error) {
	rows, err := q.QueryContext(ctx, walkSQL(ext)+` DESC LIMIT 1`)
	if err != nil {
		return nil, err
	}
	e, err := nextEvent(rows)
	rows.Close()
	if e == nil || err != nil {
		return nil, err
	}
	before, brk, err := hashBefore(ctx, q, e.seq)
	if brk != nil || err != nil {
		return brk, err
	}
	return auditchain.CheckTail(e.chainEvent(), before), nil
}

// lastBodiesBreak recomputes the hashes of the newest decision_bodies
// row's decisions from their bodies: they must end at the row's head.
func lastBodiesBreak(ctx context.Context, q tailQuerier) (*Break, error) {
	var first, firstSeq, n int64
	var head, raw []byte
	err := q.QueryRowContext(ctx, `SELECT first_event, first_seq, n, head, bodies FROM decision_bodies ORDER BY first_event DESC LIMIT 1`).
		Scan(&first, &firstSeq, &n, &head, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	hash, brk, err := hashBefore(ctx, q, first)
	if brk != nil || err != nil {
		return brk, err
	}
	bodies := splitBodies(raw)
	if int64(len(bodies)) != n {
		return &Break{Seq: first, Table: tableBodies, What: fmt.Sprintf("the newest decision_bodies row holds %d bodies but says %d", len(bodies), n)}, nil
	}
	for i, body := range bodies {
		d, err := decodeDecision(body)
		if err != nil {
			return &Break{Seq: first + int64(i), Table: tableDecisions, RowSeq: firstSeq + int64(i), What: err.Error()}, nil
		}
		r := auditchain.DecisionColumns(d, body)
		r.Seq = firstSeq + int64(i)
		hash = chainHash(hash, r.Payload())
	}
	if !bytes.Equal(hash, head) {
		return &Break{Seq: first, Table: tableBodies, What: "the newest decisions' bodies no longer hash to the head their row recorded: a body was edited"}, nil
	}
	return nil, nil
}

// hashBefore is the hash of the event before seq: an events row's, or the
// head of the decision_bodies row that ends there (a row's decisions are
// consecutive events, so the one before any row or event is one of the
// two), or the genesis before the first.
func hashBefore(ctx context.Context, q tailQuerier, seq int64) ([]byte, *Break, error) {
	if seq == 1 {
		return genesis(), nil, nil
	}
	var hash []byte
	err := q.QueryRowContext(ctx, `SELECT hash FROM events WHERE seq = ?`, seq-1).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		var last int64
		err = q.QueryRowContext(ctx, `SELECT first_event + n - 1, head FROM decision_bodies WHERE first_event < ? ORDER BY first_event DESC LIMIT 1`, seq).Scan(&last, &hash)
		if err == nil && last != seq-1 {
			err = sql.ErrNoRows
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &Break{Seq: seq, Table: "events", What: fmt.Sprintf("event %d, before it, is missing", seq-1)}, nil
	}
	return hash, nil, err
}
