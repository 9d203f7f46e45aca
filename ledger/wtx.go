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
	pending []any // records index rows not yet inserted
}

type stmts struct {
	probe, latest, insSnap, insEvent, lookup, insRec, insRecN, insFTS *sql.Stmt
}

// recBatch is how many records one multi-row INSERT carries; one statement
// per record would dominate the cost of a large ingest.
const recBatch = 16

var stmtSQL = map[string]string{
	"probe": `SELECT (SELECT body_sha256 FROM snapshots WHERE proposition_id = ?1 AND view_id = ?2),
	                 EXISTS (SELECT 1 FROM snapshots WHERE proposition_id = ?1)`,
	"latest":   `SELECT body FROM snapshots WHERE proposition_id = ? ORDER BY seq DESC LIMIT 1`,
	"insSnap":  `INSERT INTO snapshots (seq, proposition_id, view_id, body, body_sha256, canonical_sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
	"insEvent": `INSERT INTO events (seq, tbl, row_seq, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)`,
	"lookup":   `SELECT sum, view_id FROM records WHERE proposition_id = ? AND kind = ? AND record_id = ?`,
	"insRec":   `INSERT INTO records (proposition_id, kind, record_id, sum, view_id) VALUES (?, ?, ?, ?, ?)`,
	"insFTS":   `INSERT INTO assertion_fts (text, proposition_id, assertion_id) VALUES (?, ?, ?)`,
}

func insRecNSQL() string {
	s := `INSERT INTO records (proposition_id, kind, record_id, sum, view_id) VALUES (?, ?, ?, ?, ?)`
	for range recBatch - 1 {
		s += `, (?, ?, ?, ?, ?)`
	}
	return s
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
	w := &wtx{ctx: ctx, tx: tx, now: l.now().UTC().Format(time.RFC3339Nano)}
	if err := w.init(); err != nil {
		return ledgerErr("prepare write", err)
	}
	defer w.st.close()
	if err := fn(w); err != nil {
		return err
	}
	if err := w.flush(); err != nil {
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
	targets := map[string]**sql.Stmt{
		"probe": &w.st.probe, "latest": &w.st.latest, "insSnap": &w.st.insSnap, "insEvent": &w.st.insEvent,
		"lookup": &w.st.lookup, "insRec": &w.st.insRec, "insFTS": &w.st.insFTS,
	}
	for name, dst := range targets {
		s, err := w.tx.PrepareContext(w.ctx, stmtSQL[name])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		*dst = s
	}
	var err error
	w.st.insRecN, err = w.tx.PrepareContext(w.ctx, insRecNSQL())
	return err
}

func (s *stmts) close() {
	for _, st := range []*sql.Stmt{s.probe, s.latest, s.insSnap, s.insEvent, s.lookup, s.insRec, s.insRecN, s.insFTS} {
		if st != nil {
			st.Close()
		}
	}
}

// event appends one link to the hash chain.
func (w *wtx) event(tbl string, rowSeq int64, payload []byte) error {
	hash := chainHash(w.head, payload)
	w.evSeq++
	if _, err := w.st.insEvent.ExecContext(w.ctx, w.evSeq, tbl, rowSeq, string(payload), w.head, hash); err != nil {
		return ledgerErr("append event", err)
	}
	w.head = hash
	return nil
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
