package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ewp-go/ewp/audit/auditchain"
)

// writer is the log's group commit (auditchain.GroupCommit) over the one
// write connection: a batch's ops run in one transaction.
type writer struct {
	db *sql.DB
	st writeStmts
	gc *auditchain.GroupCommit[op]
	// fs is the decisions' buffers, kept from batch to batch (only the
	// writer goroutine uses it).
	fs flushState
	// The chain head as this writer's last commit left it (known), and
	// the data_version the connection saw then.
	known     bool
	seq, dseq int64
	hash      []byte
	maxID     string // the greatest in-order decision_id
	version   int64
	// schema is the file's schema_version when the writer last found its
	// triggers and tail intact (checked), checked again whenever it moves.
	schema  int64
	checked bool
}

// An op is a decision to record or any other write (an approval, a use).
// Decisions are not written one by one: the writer gathers each run of
// them and writes their bodies as one value, and a row only for the few
// special ones (flush), which is most of what makes recording cheap.
type op struct {
	rec *auditchain.Record
	fn  func(*wtx) error
	// use: rec used its approval (RecordUse) at now, and is written with
	// the use as a run of its own.
	use bool
	now time.Time
}

// An op is refused without having changed anything when the failing
// statement was its first write, which SQLite undoes alone; a failure
// after that is wrapped by auditchain.InDoubt and rolls back the batch.

// wtx is one batch transaction and the chain head within it: the
// transaction began IMMEDIATE, so no other process moves the head until
// it ends.
type wtx struct {
	ctx   context.Context
	tx    *sql.Tx
	st    *writeStmts
	stmts map[*sql.Stmt]*sql.Stmt // the batch's transaction-bound statements
	seq   int64                   // the last event
	head  []byte                  // its hash
	dseq  int64                   // the last decision's seq
	maxID string                  // the greatest in-order decision_id
	buf   []byte
	*flushState
}

type writeStmts struct {
	insApproval, insUse, insEvent, insBodies, insDecision, dataVersion, schemaVersion *sql.Stmt
}

func startWriter(db *sql.DB, maxBatch int) (*writer, error) {
	w := &writer{db: db}
	prep := []struct {
		dst **sql.Stmt
		sql string
	}{
		{&w.st.insApproval, `INSERT INTO approvals (approval_id, decision_id, verdict, created_ns, body, body_sha256) VALUES (?, ?, ?, ?, ?, ?)`},
		{&w.st.insUse, `INSERT INTO approval_uses (approval_id, used_by, used_ns) VALUES (?, ?, ?)`},
		{&w.st.insEvent, `INSERT INTO events (seq, tbl, row_seq, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)`},
		{&w.st.insBodies, `INSERT INTO decision_bodies (first_event, first_seq, n, head, first_id, last_id, bodies) VALUES (?, ?, ?, ?, ?, ?, ?)`},
		{&w.st.insDecision, `INSERT INTO decisions (seq, event, decision_id, time_ns, outcome, proposition_id, credential, idem_key, approval_id, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&w.st.dataVersion, `PRAGMA data_version`},
		{&w.st.schemaVersion, `PRAGMA schema_version`},
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

// submit queues an op and waits for the commit of its batch: nil means
// committed.
func (w *writer) submit(ctx context.Context, o op) error {
	return w.gc.Submit(ctx, o)
}

// runBatch runs the batch's ops in order in one transaction, stopping at
// the first that leaves it in doubt. Decisions wait in t.pend until the
// next other write or the end of the batch, so the chain keeps the order
// of the ops. The file's busy timeout bounds it, not ctx (a batch's
// deadline, which the PostgreSQL log needs against a frozen server).
func (w *writer) runBatch(_ context.Context, ops []op, errs []error) error {
	return w.inTx(func(t *wtx) error { return t.run(ops, errs) })
}

func (t *wtx) run(ops []op, errs []error) error {
	t.pend = t.pend[:0]
	for i, o := range ops {
		if o.rec != nil && !o.use {
			t.pend = append(t.pend, i)
			continue
		}
		if err := t.flush(ops, errs); err != nil {
			return err
		}
		if o.use {
			errs[i] = t.recordUse(ops, errs, i)
		} else {
			errs[i] = o.fn(t)
		}
		var te *auditchain.TxError
		if errors.As(errs[i], &te) {
			return te.Err
		}
	}
	return t.flush(ops, errs)
}

func (w *writer) inTx(fn func(*wtx) error) error {
	ctx := context.Background()
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	t := &wtx{ctx: ctx, tx: tx, st: &w.st, stmts: map[*sql.Stmt]*sql.Stmt{}, flushState: &w.fs}
	if err := w.guards(t); err != nil {
		return err
	}
	if err := w.head(t); err != nil {
		return fmt.Errorf("read chain head: %w", err)
	}
	w.known = false // until this transaction commits
	if err := fn(t); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	w.known, w.seq, w.hash, w.dseq, w.maxID = true, t.seq, t.head, t.dseq, t.maxID
	return nil
}

// head sets t's chain head: the one this writer committed last, while
// the file's data_version shows no other connection has committed since
// (another process approving, another server on the same log), else as
// lastEntry finds it (and the greatest in-order id as lastInOrder does).
// One pragma instead of three queries per batch.
func (w *writer) head(t *wtx) error {
	var v int64
	if err := t.stmt(w.st.dataVersion).QueryRow().Scan(&v); err != nil {
		return err
	}
	if w.known && v == w.version {
		t.seq, t.head, t.dseq, t.maxID = w.seq, w.hash, w.dseq, w.maxID
		return nil
	}
	w.version = v
	var err error
	if t.seq, t.head, t.dseq, err = lastEntry(t.ctx, t.tx); err != nil {
		return err
	}
	t.maxID, err = lastInOrder(t.ctx, t.tx)
	return err
}

// guards refuses the batch when the file's schema moved since the
// writer last found the triggers and the tail intact and they no longer
// are (checkLog): a trigger dropped by another process stops every
// commit after it. One pragma per batch while nothing changes.
func (w *writer) guards(t *wtx) error {
	var v int64
	if err := t.stmt(w.st.schemaVersion).QueryRow().Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if w.checked && v == w.schema {
		return nil
	}
	w.checked = false
	if err := checkLog(t.ctx, t.tx); err != nil {
		return err
	}
	w.schema, w.checked = v, true
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
	for _, st := range []*sql.Stmt{w.st.insApproval, w.st.insUse, w.st.insEvent, w.st.insBodies, w.st.insDecision, w.st.dataVersion, w.st.schemaVersion} {
		if st != nil {
			st.Close()
		}
	}
}
