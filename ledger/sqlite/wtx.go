package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// wtx is one write transaction. It holds the chain head and the next
// sequence numbers in memory: the transaction began IMMEDIATE, so no other
// writer can move them until it ends.
type wtx struct {
	ctx     context.Context
	tx      *sql.Tx
	now     string
	evSeq   int64
	head    []byte
	snapSeq int64
	primSeq int64
	st      stmts
	bulk    map[string]*sql.Stmt // multi-row INSERTs by table and row count
	pend    pending
	props   map[string]*propState
	// remembered counts the records held in props' added maps.
	remembered int
	// foldedText: index assertion text folded (metaSearchText).
	foldedText bool
	// maxBody bounds stored forms (Options.MaxViewBytes).
	maxBody int64
}

type stmts struct {
	known, probe, latest, lookup *sql.Stmt
}

var stmtSQL = map[string]string{
	"known":  `SELECT EXISTS (SELECT 1 FROM snapshots WHERE proposition_id = ?)`,
	"probe":  `SELECT body_sha256, seq FROM snapshots WHERE proposition_id = ? AND view_id = ?`,
	"latest": latestBodySQL,
	"lookup": `SELECT sum, view_id FROM records WHERE proposition_id = ? AND kind = ? AND record_id = ?`,
}

// write runs fn in one IMMEDIATE transaction: all of it commits or none.
func (l *Ledger) write(ctx context.Context, fn func(w *wtx) error) error {
	if l.ro {
		return l.errReadOnly()
	}
	tx, err := l.w.BeginTx(ctx, nil)
	if err != nil {
		return ledgerErr("begin write transaction", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	w := &wtx{ctx: ctx, tx: tx, now: l.now().UTC().Format(time.RFC3339Nano),
		props: map[string]*propState{}, bulk: map[string]*sql.Stmt{}, foldedText: l.foldedText, maxBody: l.maxBody}
	defer w.close()
	if err := w.init(); err != nil {
		return ledgerErr("begin write", err)
	}
	if err := fn(w); err != nil {
		return err
	}
	if err := w.flush(true); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return ledgerErr("commit", err)
	}
	return nil
}

func (w *wtx) init() error {
	if err := w.tail(); err != nil {
		return err
	}
	if err := w.tx.QueryRowContext(w.ctx, `SELECT COALESCE(MAX(seq), 0) FROM snapshots`).Scan(&w.snapSeq); err != nil {
		return err
	}
	if err := w.tx.QueryRowContext(w.ctx, `SELECT COALESCE(MAX(seq), 0) FROM primitive_revisions`).Scan(&w.primSeq); err != nil {
		return err
	}
	if err := w.rowsBehindTail(); err != nil {
		return err
	}
	return w.prepare()
}

// brokenChain refuses a write: extending a broken chain would bury the
// break under new, validly linked events.
func brokenChain(what string) error {
	return fmt.Errorf("%w (%s); nothing was written: run `ewp-ingest verify --db PATH` to see what changed, and restore the file from a copy that verifies", ledger.ErrBrokenChain, what)
}

// tail loads the chain head and checks, before anything is appended, what
// can be checked in constant time: the last event's hash recomputes from
// its prev_hash and payload, its prev_hash is the previous event's hash,
// and the append-only triggers are all there as this build made them. A
// full Verify per write would cost the whole ledger; see the package doc
// for what only Verify finds.
func (w *wtx) tail() error {
	rows, err := w.tx.QueryContext(w.ctx, `SELECT seq, payload, prev_hash, hash FROM events ORDER BY seq DESC LIMIT 2`)
	if err != nil {
		return err
	}
	defer rows.Close()
	type ev struct {
		seq        int64
		payload    string
		prev, hash []byte
	}
	var evs []ev
	for rows.Next() {
		var e ev
		if err := rows.Scan(&e.seq, &e.payload, &e.prev, &e.hash); err != nil {
			return err
		}
		evs = append(evs, e)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	w.evSeq, w.head = 0, genesis
	if len(evs) > 0 {
		last, wantSeq, before := evs[0], int64(1), genesis
		if len(evs) == 2 {
			wantSeq, before = evs[1].seq+1, evs[1].hash
		}
		if what := checkLink(last.seq, wantSeq, last.prev, before, last.hash, last.payload); what != "" {
			return brokenChain(fmt.Sprintf("last event %d: %s", last.seq, what))
		}
		w.evSeq, w.head = last.seq, last.hash
		if err := w.tailRow(last.seq); err != nil {
			return err
		}
	}
	return w.triggers()
}

// tailRow checks that the row the last event records still matches it,
// a snapshot's body included: the newest snapshot is the likeliest to be
// edited, and one row costs a point read and one hash.
func (w *wtx) tailRow(seq int64) error {
	rows, err := w.tx.QueryContext(w.ctx, eventRowsSQL+` WHERE e.seq = ?`, seq)
	if err != nil {
		return err
	}
	var e eventRow
	if rows.Next() {
		err = e.scan(rows)
	}
	rows.Close()
	if err != nil {
		return err
	}
	if what := recordedRow(&e); what != "" {
		return brokenChain(fmt.Sprintf("last event %d (%s row %d): %s", seq, e.tbl, e.rowSeq, what))
	}
	if e.tbl != tableSnapshots {
		return nil
	}
	// A body over the ledger's limit is not read (Options.MaxViewBytes
	// holds for every read); Verify still hashes it.
	var body []byte
	err = w.tx.QueryRowContext(w.ctx, `SELECT CASE WHEN length(body) <= ? THEN body END FROM snapshots WHERE seq = ?`, w.maxBody, e.rowSeq).Scan(&body)
	if err != nil {
		return err
	}
	if sum := sha256.Sum256(body); body != nil && !bytes.Equal(sum[:], e.sBodySum) {
		return brokenChain(fmt.Sprintf("last event %d: snapshot %d's body does not match its body_sha256", seq, e.rowSeq))
	}
	return nil
}

// triggers checks that every append-only trigger is in place, unchanged.
func (w *wtx) triggers() error {
	want, err := expectedSchema()
	if err != nil {
		return err
	}
	got, err := readSchemaWhere(w.ctx, w.tx, `type = 'trigger'`)
	if err != nil {
		return err
	}
	for name, o := range want {
		if o.typ == "trigger" && got[name] != o {
			return brokenChain(fmt.Sprintf("the append-only trigger %s is missing or altered", name))
		}
	}
	for name := range got {
		if want[name].typ != "trigger" {
			return brokenChain(fmt.Sprintf("trigger %s is not part of the ledger schema", name))
		}
	}
	return nil
}

// rowsBehindTail refuses a write when the newest snapshot or graph
// revision is one no event records (inserted behind the chain): the new
// rows would be numbered after it and the chain would seem to vouch for it.
func (w *wtx) rowsBehindTail() error {
	var snaps, prims int64
	err := w.tx.QueryRowContext(w.ctx, `SELECT
		(SELECT COALESCE(MAX(row_seq), 0) FROM events WHERE tbl = 'snapshots'),
		(SELECT COALESCE(MAX(row_seq), 0) FROM events WHERE tbl = 'primitive_revisions')`).Scan(&snaps, &prims)
	if err != nil {
		return err
	}
	if snaps != w.snapSeq || prims != w.primSeq {
		return brokenChain(fmt.Sprintf("the newest rows (snapshot %d, graph revision %d) are not the ones the chain records (%d, %d)", w.snapSeq, w.primSeq, snaps, prims))
	}
	return nil
}

func (w *wtx) prepare() error {
	targets := map[string]**sql.Stmt{"known": &w.st.known, "probe": &w.st.probe, "latest": &w.st.latest, "lookup": &w.st.lookup}
	for name, dst := range targets {
		s, err := w.tx.PrepareContext(w.ctx, stmtSQL[name])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		*dst = s
	}
	return nil
}

func (w *wtx) close() {
	for _, st := range []*sql.Stmt{w.st.known, w.st.probe, w.st.latest, w.st.lookup} {
		if st != nil {
			st.Close()
		}
	}
	for _, st := range w.bulk {
		st.Close()
	}
}

// event queues one link of the hash chain.
func (w *wtx) event(tbl string, rowSeq int64, payload []byte) {
	hash := chainHash(w.head, payload)
	w.evSeq++
	w.pend.events = append(w.pend.events, chainRow{w.evSeq, rowSeq, tbl, payload, w.head, hash})
	w.head = hash
}

func ledgerErr(op string, err error) error {
	var le *ledger.Error
	if errors.As(err, &le) {
		return err
	}
	return &ledger.Error{Op: op, Err: err}
}
