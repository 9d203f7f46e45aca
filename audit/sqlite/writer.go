package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/ewp-go/ewp/audit/auditchain"
)

// writer is the log's group commit (auditchain.GroupCommit) over the one
// write connection: a batch's ops run in one transaction.
type writer struct {
	db *sql.DB
	st writeStmts
	gc *auditchain.GroupCommit[func(*wtx) error]
}

// An op is refused without having changed anything when the failing
// statement was its first write, which SQLite undoes alone; a failure
// after that is wrapped by auditchain.InDoubt and rolls back the batch.

// wtx is one batch transaction and the chain head within it: the
// transaction began IMMEDIATE, so no other process moves the head until
// it ends.
type wtx struct {
	tx    *sql.Tx
	st    *writeStmts
	stmts map[*sql.Stmt]*sql.Stmt // the batch's transaction-bound statements
	seq   int64
	head  []byte
	buf   []byte
}

type writeStmts struct {
	insDecision, insApproval, insUse, insEvent, head *sql.Stmt
}

func startWriter(db *sql.DB, maxBatch int) (*writer, error) {
	w := &writer{db: db}
	prep := []struct {
		dst **sql.Stmt
		sql string
	}{
		{&w.st.insDecision, `INSERT INTO decisions (decision_id, time_ns, tool, outcome, proposition_id, credential, idem_key, approval_id, body, body_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&w.st.insApproval, `INSERT INTO approvals (approval_id, decision_id, verdict, created_ns, body, body_sha256) VALUES (?, ?, ?, ?, ?, ?)`},
		{&w.st.insUse, `INSERT INTO approval_uses (approval_id, used_by, used_ns) VALUES (?, ?, ?)`},
		{&w.st.insEvent, `INSERT INTO events (seq, tbl, row_seq, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)`},
		{&w.st.head, `SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1`},
	}
	for _, p := range prep {
		st, err := db.Prepare(p.sql)
		if err != nil {
			w.closeStmts()
			return nil, err
		}
		*p.dst = st
	}
	w.gc = auditchain.StartGroupCommit(maxBatch, w.runBatch)
	return w, nil
}

// submit queues fn and waits for the commit of its batch: nil means
// committed.
func (w *writer) submit(ctx context.Context, fn func(*wtx) error) error {
	return w.gc.Submit(ctx, fn)
}

// runBatch runs the batch's ops in order in one transaction, stopping at
// the first that leaves it in doubt.
func (w *writer) runBatch(ops []func(*wtx) error, errs []error) error {
	return w.inTx(func(t *wtx) error {
		for i, run := range ops {
			errs[i] = run(t)
			var te *auditchain.TxError
			if errors.As(errs[i], &te) {
				return te.Err
			}
		}
		return nil
	})
}

func (w *writer) inTx(fn func(*wtx) error) error {
	ctx := context.Background()
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	t := &wtx{tx: tx, st: &w.st, stmts: map[*sql.Stmt]*sql.Stmt{}}
	err = t.stmt(w.st.head).QueryRow().Scan(&t.seq, &t.head)
	if errors.Is(err, sql.ErrNoRows) {
		t.seq, t.head, err = 0, genesis, nil
	}
	if err != nil {
		return fmt.Errorf("read chain head: %w", err)
	}
	if err := fn(t); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// stmt binds a prepared statement to the batch's transaction once.
func (t *wtx) stmt(st *sql.Stmt) *sql.Stmt {
	s, ok := t.stmts[st]
	if !ok {
		s = t.tx.Stmt(st)
		t.stmts[st] = s
	}
	return s
}

func (t *wtx) exec(st *sql.Stmt, args ...any) (sql.Result, error) {
	return t.stmt(st).Exec(args...)
}

// event appends the chain entry recording row rowSeq of table tbl, whose
// payload is pre + rowSeq + post (see splitPayload).
func (t *wtx) event(tbl string, rowSeq int64, pre, post []byte) error {
	t.buf = append(strconv.AppendInt(append(t.buf[:0], pre...), rowSeq, 10), post...)
	hash := chainHash(t.head, t.buf)
	if _, err := t.exec(t.st.insEvent, t.seq+1, tbl, rowSeq, string(t.buf), t.head, hash); err != nil {
		return auditchain.InDoubt(err)
	}
	t.seq, t.head = t.seq+1, hash
	return nil
}

// stop lets queued writes commit, ends the goroutine and closes the
// statements.
func (w *writer) stop() {
	w.gc.Stop()
	w.closeStmts()
}

func (w *writer) closeStmts() {
	for _, st := range []*sql.Stmt{w.st.insDecision, w.st.insApproval, w.st.insUse, w.st.insEvent, w.st.head} {
		if st != nil {
			st.Close()
		}
	}
}
