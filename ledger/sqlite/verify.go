package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
)

// Verify checks every table of the file against the hash chain, in one
// consistent read transaction (so it may run beside writers), streaming
// (its memory is bounded by the largest proposition, never the ledger):
//
//   - the schema: every table, index and trigger in sqlite_master has
//     exactly the DDL this build creates, nothing more or less (a dropped
//     append-only trigger is a break);
//   - ledger_meta holds exactly the keys this build writes;
//   - the chain: each event's hash is sha256(prev_hash || payload), its
//     prev_hash is the hash before it, sequence numbers have no gap, and
//     the row each event records still matches its payload;
//   - no snapshot or primitive row is missing its event;
//   - every snapshot body hashes to body_sha256, decodes with the kernel,
//     names its own row, re-encodes to the same bytes and has the stored
//     canonical hash;
//   - the derived tables, rebuilt from the snapshots: the record identity
//     index and the search index hold exactly the rows the snapshots
//     produce (no missing row, no extra row, no other content).
//
// It stops at the first problem, which it returns both in the report and
// as the error (a *ledger.Break); other errors are I/O failures. Content breaks
// are reported before a missing trigger, so an edit made by dropping a
// trigger names the edited row. What no check inside the file can see is
// a chain cut off at its end together with every row it recorded: compare
// the head (rep.Head) with one kept outside the file ([VerifyHead]).
func (l *Ledger) Verify(ctx context.Context) (ledger.VerifyReport, error) {
	var rep ledger.VerifyReport
	tx, err := l.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return rep, ledgerErr("verify", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	v := &verifier{ctx: ctx, tx: tx, rep: &rep, head: genesis}
	rep.Broken, err = v.run()
	if err != nil {
		return rep, err
	}
	if rep.Broken != nil {
		return rep, rep.Broken
	}
	return rep, nil
}

// run performs the checks in order and returns the first break.
func (v *verifier) run() (*ledger.Break, error) {
	triggers, brk, err := v.schema()
	if brk != nil || err != nil {
		return brk, err
	}
	steps := []func() (*ledger.Break, error){v.meta, v.walk, v.orphans, v.derived}
	for _, step := range steps {
		if brk, err := step(); brk != nil || err != nil {
			return brk, err
		}
	}
	return triggers, nil
}

type verifier struct {
	ctx  context.Context
	tx   *sql.Tx
	rep  *ledger.VerifyReport
	head []byte
	// foldedText: the search index holds folded text (see ftsText).
	foldedText bool
}

// walkSQL reads the chain with the rows it records. A snapshot's body is
// not read here: its body_sha256 column stands for it, and the derived
// pass hashes every body once and compares it with that column.
const walkSQL = eventRowsSQL + ` ORDER BY e.seq`

// eventRowsSQL reads events with the rows they record (see eventRow).
const eventRowsSQL = `
SELECT e.seq, e.tbl, e.row_seq, e.payload, e.prev_hash, e.hash,
       s.seq, s.proposition_id, s.view_id, s.body_sha256, s.canonical_sha256, s.created_at,
       p.seq, p.primitive_id, p.name_fold, p.body, p.created_at
FROM events e
LEFT JOIN snapshots s ON e.tbl = 'snapshots' AND s.seq = e.row_seq
LEFT JOIN primitive_revisions p ON e.tbl = 'primitive_revisions' AND p.seq = e.row_seq`

type eventRow struct {
	seq, rowSeq            int64
	tbl, payload           string
	prev, hash             []byte
	sSeq                   sql.NullInt64
	sProp, sView, sCreated sql.NullString
	sBodySum, sCanon       []byte
	pSeq                   sql.NullInt64
	pID, pFold, pCreated   sql.NullString
	pBody                  []byte
}

func (e *eventRow) scan(rows *sql.Rows) error {
	return rows.Scan(&e.seq, &e.tbl, &e.rowSeq, &e.payload, &e.prev, &e.hash,
		&e.sSeq, &e.sProp, &e.sView, &e.sBodySum, &e.sCanon, &e.sCreated,
		&e.pSeq, &e.pID, &e.pFold, &e.pBody, &e.pCreated)
}

// recordedRow checks the row event e records against its payload; for a
// snapshot the body_sha256 column stands for the body. "" when it matches.
func recordedRow(e *eventRow) string {
	var b *ledger.Break
	brk := func(format string, args ...any) *ledger.Break {
		return &ledger.Break{What: fmt.Sprintf(format, args...)}
	}
	v := &verifier{rep: &ledger.VerifyReport{}}
	switch e.tbl {
	case tableSnapshots:
		b = v.snapshotRow(e, brk)
	case tablePrimitives:
		b = v.primitiveRow(e, brk)
	default:
		b = brk("unknown table %q", e.tbl)
	}
	if b == nil {
		return ""
	}
	return b.What
}

func (v *verifier) walk() (*ledger.Break, error) {
	rows, err := v.tx.QueryContext(v.ctx, walkSQL)
	if err != nil {
		return nil, ledgerErr("verify", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e eventRow
		if err := e.scan(rows); err != nil {
			return nil, ledgerErr("verify", err)
		}
		if b := v.event(&e); b != nil {
			return b, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, ledgerErr("verify", err)
	}
	v.rep.Head = ledger.Head{Seq: v.rep.Events}
	if v.rep.Events > 0 {
		v.rep.Head.Hash = hex.EncodeToString(v.head)
	}
	return nil, nil
}

// event checks one link and the row it records.
func (v *verifier) event(e *eventRow) *ledger.Break {
	v.rep.Events++
	brk := func(format string, args ...any) *ledger.Break {
		return &ledger.Break{Seq: e.seq, Table: e.tbl, RowSeq: e.rowSeq, What: fmt.Sprintf(format, args...)}
	}
	if b := checkLink(e.seq, v.rep.Events, e.prev, v.head, e.hash, e.payload); b != "" {
		return brk("%s", b)
	}
	v.head = e.hash
	switch e.tbl {
	case tableSnapshots:
		return v.snapshotRow(e, brk)
	case tablePrimitives:
		return v.primitiveRow(e, brk)
	}
	return brk("unknown table %q", e.tbl)
}

type breaker func(format string, args ...any) *ledger.Break

func (v *verifier) snapshotRow(e *eventRow, brk breaker) *ledger.Break {
	v.rep.Snapshots++
	if !e.sSeq.Valid {
		return brk("the snapshot row this event records is gone")
	}
	now := snapshotEvent(e.sSeq.Int64, e.sProp.String, e.sView.String, e.sBodySum, e.sCanon, e.sCreated.String)
	if d := payloadDiff(e.payload, now); d != "" {
		return brk("row differs from what the event recorded: %s", d)
	}
	return nil
}

func (v *verifier) primitiveRow(e *eventRow, brk breaker) *ledger.Break {
	v.rep.Primitives++
	if !e.pSeq.Valid {
		return brk("the primitive revision this event records is gone")
	}
	now := primitiveEvent(e.pSeq.Int64, e.pID.String, e.pFold.String, e.pBody, e.pCreated.String)
	if d := payloadDiff(e.payload, now); d != "" {
		return brk("row differs from what the event recorded: %s", d)
	}
	return nil
}

// orphans finds rows that no event records (inserted behind the chain).
func (v *verifier) orphans() (*ledger.Break, error) {
	for _, t := range []string{tableSnapshots, tablePrimitives} {
		var seq int64
		err := v.tx.QueryRowContext(v.ctx, `SELECT seq FROM `+t+` WHERE NOT EXISTS (SELECT 1 FROM events WHERE tbl = ? AND row_seq = `+t+`.seq) ORDER BY seq LIMIT 1`, t).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, ledgerErr("verify", err)
		}
		return &ledger.Break{Table: t, RowSeq: seq, What: "row is not recorded by any event (inserted behind the chain)"}, nil
	}
	return nil, nil
}
