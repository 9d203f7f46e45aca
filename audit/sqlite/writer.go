package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// writer is the group commit: one goroutine owns the write connection and
// takes every pending write (a Record, an Approve, a Consume) off one
// channel. Whatever queued while the previous commit ran goes into the
// next transaction together, so 64 concurrent Records cost a handful of
// commits, not 64; each caller waits for the commit of its own batch, so
// Record is still durable when it returns.
type writer struct {
	db       *sql.DB
	ops      chan *op
	maxBatch int
	st       writeStmts
	quit     chan struct{}
	wg       sync.WaitGroup
	mu       sync.RWMutex // held shared by submitters, exclusively by stop
	stopped  bool
	// commits and written count transactions and the writes they carried
	// (the tests check that concurrent writes share commits).
	commits, written atomic.Int64
}

// op is one pending write, run inside the batch's transaction. It either
// succeeds, or is refused without having changed anything (a refusal: the
// failing statement was its first write, which SQLite undoes alone), or
// fails with a *txError, after which the transaction is in doubt and the
// whole batch is rolled back.
type op struct {
	run  func(w *wtx) error
	done chan error
}

// txError marks a failure in the middle of an op's writes.
type txError struct{ err error }

func (e *txError) Error() string { return e.err.Error() }
func (e *txError) Unwrap() error { return e.err }

func inDoubt(err error) error {
	if err == nil {
		return nil
	}
	return &txError{err}
}

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

var errClosed = errors.New("the decision log is closed")

func startWriter(db *sql.DB, maxBatch int) (*writer, error) {
	w := &writer{db: db, ops: make(chan *op, 4*maxBatch), maxBatch: maxBatch, quit: make(chan struct{})}
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
	w.wg.Add(1)
	go w.loop()
	return w, nil
}

// submit queues fn and waits for the commit of its batch. It waits even
// when ctx ends meanwhile, so its answer is exact: nil means committed.
func (w *writer) submit(ctx context.Context, fn func(*wtx) error) error {
	o := &op{run: fn, done: make(chan error, 1)}
	w.mu.RLock()
	if w.stopped {
		w.mu.RUnlock()
		return errClosed
	}
	select {
	case w.ops <- o:
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	w.mu.RUnlock()
	return <-o.done
}

func (w *writer) loop() {
	defer w.wg.Done()
	batch := make([]*op, 0, w.maxBatch)
	for {
		select {
		case o := <-w.ops:
			batch = w.gather(append(batch[:0], o))
			w.commit(batch)
		case <-w.quit:
			// stop holds the lock, so nothing more arrives: drain.
			for {
				select {
				case o := <-w.ops:
					w.commit(w.gather([]*op{o}))
				default:
					return
				}
			}
		}
	}
}

// gather fills the batch with what is queued, then yields the processor
// once and goes on while that brought more: callers woken by the previous
// commit are about to submit again, and a commit costs as much as many
// records, so letting them catch up beats committing them one by one. A
// lone caller waits one yield.
func (w *writer) gather(batch []*op) []*op {
	for {
	drain:
		for len(batch) < w.maxBatch {
			select {
			case o := <-w.ops:
				batch = append(batch, o)
			default:
				break drain
			}
		}
		if len(batch) >= w.maxBatch {
			return batch
		}
		runtime.Gosched()
		if len(w.ops) == 0 {
			return batch
		}
	}
}

// commit runs a batch in one transaction. An op that is refused (a
// duplicate idempotency key, a used approval) has changed nothing and the
// others still commit; a failure inside an op's writes, or of the commit,
// fails the whole batch.
func (w *writer) commit(batch []*op) {
	w.commits.Add(1)
	w.written.Add(int64(len(batch)))
	errs := make([]error, len(batch))
	err := w.inTx(func(t *wtx) error {
		for i, o := range batch {
			errs[i] = o.run(t)
			var te *txError
			if errors.As(errs[i], &te) {
				return te.err
			}
		}
		return nil
	})
	for i, o := range batch {
		if err != nil {
			var te *txError
			if errs[i] == nil || errors.As(errs[i], &te) {
				errs[i] = err
			}
		}
		o.done <- errs[i]
	}
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
		return inDoubt(err)
	}
	t.seq, t.head = t.seq+1, hash
	return nil
}

// stop lets queued writes commit and ends the goroutine.
func (w *writer) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	close(w.quit)
	w.wg.Wait()
	w.closeStmts()
}

func (w *writer) closeStmts() {
	for _, st := range []*sql.Stmt{w.st.insDecision, w.st.insApproval, w.st.insUse, w.st.insEvent, w.st.head} {
		if st != nil {
			st.Close()
		}
	}
}
