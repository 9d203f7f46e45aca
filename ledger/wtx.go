package ledger

import (
	"context"
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
}

type stmts struct {
	known, probe, latest, lookup *sql.Stmt
}

var stmtSQL = map[string]string{
	"known":  `SELECT EXISTS (SELECT 1 FROM snapshots WHERE proposition_id = ?)`,
	"probe":  `SELECT body_sha256, seq FROM snapshots WHERE proposition_id = ? AND view_id = ?`,
	"latest": `SELECT body FROM snapshots WHERE proposition_id = ? ORDER BY seq DESC LIMIT 1`,
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
		props: map[string]*propState{}, bulk: map[string]*sql.Stmt{}}
	defer w.close()
	if err := w.init(); err != nil {
		return ledgerErr("prepare write", err)
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
	err := w.tx.QueryRowContext(w.ctx, `SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`).Scan(&w.evSeq, &w.head)
	if errors.Is(err, sql.ErrNoRows) {
		w.evSeq, w.head, err = 0, genesis, nil
	}
	if err != nil {
		return err
	}
	if err := w.tx.QueryRowContext(w.ctx, `SELECT COALESCE(MAX(seq), 0) FROM snapshots`).Scan(&w.snapSeq); err != nil {
		return err
	}
	if err := w.tx.QueryRowContext(w.ctx, `SELECT COALESCE(MAX(seq), 0) FROM primitive_revisions`).Scan(&w.primSeq); err != nil {
		return err
	}
	return w.prepare()
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

// Error is a ledger (storage) failure as opposed to a refusal of the input,
// which is a *warrant.Error. Callers map the two to different exit codes
// and MCP errors.
type Error struct {
	Op  string
	Err error
}

func (e *Error) Error() string { return "ledger: " + e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func ledgerErr(op string, err error) error {
	var le *Error
	if errors.As(err, &le) {
		return err
	}
	return &Error{Op: op, Err: err}
}
