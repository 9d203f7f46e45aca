package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// VerifyReport is the result of walking the ledger.
type VerifyReport struct {
	Events     int64
	Snapshots  int64
	Primitives int64
	// Broken is the first problem found, nil when the ledger is intact.
	Broken *Break
}

// OK reports an intact ledger.
func (r VerifyReport) OK() bool { return r.Broken == nil }

// Break names the first broken or edited event.
type Break struct {
	// Seq is the event's sequence number; 0 when the problem is a row that
	// no event records.
	Seq    int64
	Table  string
	RowSeq int64
	What   string
}

func (b *Break) Error() string {
	if b.Seq == 0 {
		return fmt.Sprintf("ledger broken: %s row %d: %s", b.Table, b.RowSeq, b.What)
	}
	return fmt.Sprintf("ledger broken at event %d (%s row %d): %s", b.Seq, b.Table, b.RowSeq, b.What)
}

// Verify walks the hash chain from the first event and checks every stored
// row against the event that recorded it, every snapshot body against the
// kernel (it must decode and re-encode to the same bytes, with the stored
// canonical hash) and the record identity index against the snapshots. It
// stops at the first problem, which it returns both in the report and as
// the error (a *Break); other errors are I/O failures. It reads one
// consistent snapshot of the file, so it may run beside writers.
func (l *Ledger) Verify(ctx context.Context) (VerifyReport, error) {
	var rep VerifyReport
	tx, err := l.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return rep, ledgerErr("verify", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	v := &verifier{ctx: ctx, tx: tx, rep: &rep, head: genesis}
	if err := v.walk(); err != nil {
		return rep, err
	}
	if rep.Broken == nil {
		rep.Broken, err = v.orphans()
		if err != nil {
			return rep, err
		}
	}
	if rep.Broken != nil {
		return rep, rep.Broken
	}
	return rep, nil
}

type verifier struct {
	ctx    context.Context
	tx     *sql.Tx
	rep    *VerifyReport
	head   []byte
	lookup *sql.Stmt
}

const walkSQL = `
SELECT e.seq, e.tbl, e.row_seq, e.payload, e.prev_hash, e.hash,
       s.seq, s.proposition_id, s.view_id, s.body, s.body_sha256, s.canonical_sha256, s.created_at,
       p.seq, p.primitive_id, p.name_fold, p.body, p.created_at
FROM events e
LEFT JOIN snapshots s ON e.tbl = 'snapshots' AND s.seq = e.row_seq
LEFT JOIN primitive_revisions p ON e.tbl = 'primitive_revisions' AND p.seq = e.row_seq
ORDER BY e.seq`

type eventRow struct {
	seq, rowSeq             int64
	tbl, payload            string
	prev, hash              []byte
	sSeq                    sql.NullInt64
	sProp, sView, sCreated  sql.NullString
	sBody, sBodySum, sCanon []byte
	pSeq                    sql.NullInt64
	pID, pFold, pCreated    sql.NullString
	pBody                   []byte
}

func (v *verifier) walk() error {
	var err error
	v.lookup, err = v.tx.PrepareContext(v.ctx, `SELECT sum FROM records WHERE proposition_id = ? AND kind = ? AND record_id = ?`)
	if err != nil {
		return ledgerErr("verify", err)
	}
	defer v.lookup.Close()
	rows, err := v.tx.QueryContext(v.ctx, walkSQL)
	if err != nil {
		return ledgerErr("verify", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e eventRow
		if err := rows.Scan(&e.seq, &e.tbl, &e.rowSeq, &e.payload, &e.prev, &e.hash,
			&e.sSeq, &e.sProp, &e.sView, &e.sBody, &e.sBodySum, &e.sCanon, &e.sCreated,
			&e.pSeq, &e.pID, &e.pFold, &e.pBody, &e.pCreated); err != nil {
			return ledgerErr("verify", err)
		}
		if b, err := v.event(&e); b != nil || err != nil {
			v.rep.Broken = b
			return err
		}
	}
	return ledgerErrOrNil("verify", rows.Err())
}

// event checks one link and the row it records.
func (v *verifier) event(e *eventRow) (*Break, error) {
	v.rep.Events++
	brk := func(format string, args ...any) *Break {
		return &Break{Seq: e.seq, Table: e.tbl, RowSeq: e.rowSeq, What: fmt.Sprintf(format, args...)}
	}
	switch {
	case e.seq != v.rep.Events:
		return brk("event %d is missing (events jump from %d to %d)", v.rep.Events, v.rep.Events-1, e.seq), nil
	case !bytes.Equal(e.prev, v.head):
		return brk("prev_hash does not match the hash of event %d", e.seq-1), nil
	case !bytes.Equal(e.hash, chainHash(e.prev, []byte(e.payload))):
		return brk("hash is not sha256(prev_hash || payload): the event itself was edited"), nil
	}
	v.head = e.hash
	switch e.tbl {
	case tableSnapshots:
		return v.snapshotRow(e, brk)
	case tablePrimitives:
		return v.primitiveRow(e, brk), nil
	}
	return brk("unknown table %q", e.tbl), nil
}

type breaker func(format string, args ...any) *Break

func (v *verifier) snapshotRow(e *eventRow, brk breaker) (*Break, error) {
	v.rep.Snapshots++
	if !e.sSeq.Valid {
		return brk("the snapshot row this event records is gone"), nil
	}
	bodySum := sha256.Sum256(e.sBody)
	now := snapshotEvent(e.sSeq.Int64, e.sProp.String, e.sView.String, bodySum[:], e.sCanon, e.sCreated.String)
	if d := payloadDiff(e.payload, now); d != "" {
		return brk("row differs from what the event recorded: %s", d), nil
	}
	if !bytes.Equal(bodySum[:], e.sBodySum) {
		return brk("body_sha256 column does not match the body"), nil
	}
	return v.deep(e, brk)
}

// deep re-reads the body with the kernel: it must decode, name the same
// snapshot, re-encode to the same bytes and agree with the identity index.
func (v *verifier) deep(e *eventRow, brk breaker) (*Break, error) {
	view, err := warrant.DecodeView(e.sBody)
	if err != nil {
		return brk("body no longer decodes: %v", err), nil
	}
	if view.PropositionID != e.sProp.String || view.ViewID != e.sView.String {
		return brk("body names %s/%s, the row %s/%s", view.PropositionID, view.ViewID, e.sProp.String, e.sView.String), nil
	}
	if !bytes.Equal(warrant.Encode(view), e.sBody) {
		return brk("body does not re-encode to the same bytes (stored form is not canonical)"), nil
	}
	if c := sha256.Sum256(warrant.Canonical(view)); !bytes.Equal(c[:], e.sCanon) {
		return brk("canonical_sha256 does not match the canonical form of the body"), nil
	}
	return v.index(view, brk)
}

func (v *verifier) index(view *warrant.View, brk breaker) (*Break, error) {
	for _, f := range snapshot.Fingerprints(view) {
		var sum []byte
		err := v.lookup.QueryRowContext(v.ctx, view.PropositionID, string(f.Kind), f.ID).Scan(&sum)
		if errors.Is(err, sql.ErrNoRows) {
			return brk("record index lacks %s %q", f.Kind, f.ID), nil
		}
		if err != nil {
			return nil, ledgerErr("verify", err)
		}
		if !bytes.Equal(sum, f.Sum[:]) {
			return brk("record index holds other content for %s %q than this snapshot", f.Kind, f.ID), nil
		}
	}
	return nil, nil
}

func (v *verifier) primitiveRow(e *eventRow, brk breaker) *Break {
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
func (v *verifier) orphans() (*Break, error) {
	for _, t := range []string{tableSnapshots, tablePrimitives} {
		var seq int64
		err := v.tx.QueryRowContext(v.ctx, `SELECT seq FROM `+t+` WHERE NOT EXISTS (SELECT 1 FROM events WHERE tbl = ? AND row_seq = `+t+`.seq) ORDER BY seq LIMIT 1`, t).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, ledgerErr("verify", err)
		}
		return &Break{Table: t, RowSeq: seq, What: "row is not recorded by any event (inserted behind the chain)"}, nil
	}
	return nil, nil
}

// payloadDiff names the fields in which the recorded payload and the one
// rebuilt from the row differ; "" when they are equal.
func payloadDiff(recorded string, now []byte) string {
	if recorded == string(now) {
		return ""
	}
	var a, b map[string]any
	if json.Unmarshal([]byte(recorded), &a) != nil || json.Unmarshal(now, &b) != nil {
		return "payload is not valid JSON"
	}
	var diffs []string
	for k := range b {
		if fmt.Sprint(a[k]) != fmt.Sprint(b[k]) {
			diffs = append(diffs, fmt.Sprintf("%s (event: %v, row now: %v)", k, a[k], b[k]))
		}
	}
	slices.Sort(diffs)
	if len(diffs) == 0 {
		return "payload text differs"
	}
	return strings.Join(diffs, "; ")
}
