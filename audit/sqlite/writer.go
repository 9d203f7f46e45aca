package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
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
}

// op is one pending write. run executes it inside the batch's transaction
// and appends its events through w; it must either succeed or leave the
// transaction as it found it (it runs under a savepoint, rolled back on
// error).
type op struct {
	run  func(w *wtx) error
	done chan error
}

// wtx is one batch transaction and the chain head within it: the
// transaction began IMMEDIATE, so no other process moves the head until
// it ends.
type wtx struct {
	tx   *sql.Tx
	st   *writeStmts
	seq  int64
	head []byte
}

type writeStmts struct {
	insDecision, insApproval, insUse, insEvent *sql.Stmt
	savepoint, release, rollbackTo, head       *sql.Stmt
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
		{&w.st.savepoint, `SAVEPOINT op`},
		{&w.st.release, `RELEASE op`},
		{&w.st.rollbackTo, `ROLLBACK TO op`},
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
			batch = append(batch[:0], o)
		case <-w.quit:
			// stop holds the lock, so nothing more arrives: drain.
			for {
				select {
				case o := <-w.ops:
					w.commit([]*op{o})
				default:
					return
				}
			}
		}
	fill:
		for len(batch) < w.maxBatch {
			select {
			case o := <-w.ops:
				batch = append(batch, o)
			default:
				break fill
			}
		}
		w.commit(batch)
	}
}

// commit runs a batch in one transaction. Each op runs under a savepoint,
// so one that fails (a duplicate idempotency key, a used approval) is
// undone alone and the others still commit. Only a failure to undo, or of
// the commit itself, fails the whole batch.
func (w *writer) commit(batch []*op) {
	errs := make([]error, len(batch))
	err := w.inTx(func(t *wtx) error {
		for i, o := range batch {
			var undo error
			errs[i], undo = t.apply(o.run)
			if undo != nil {
				return undo
			}
		}
		return nil
	})
	for i, o := range batch {
		if err != nil && errs[i] == nil {
			errs[i] = err
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
	t := &wtx{tx: tx, st: &w.st}
	err = tx.StmtContext(ctx, w.st.head).QueryRowContext(ctx).Scan(&t.seq, &t.head)
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

// apply runs one op under a savepoint. On the op's error it rolls the
// savepoint back and restores the in-memory head; undo is an error of the
// savepoint machinery, after which the transaction is in doubt.
func (t *wtx) apply(run func(*wtx) error) (err, undo error) {
	ctx := context.Background()
	if _, err := t.tx.StmtContext(ctx, t.st.savepoint).ExecContext(ctx); err != nil {
		return err, err
	}
	seq, head := t.seq, t.head
	if err := run(t); err != nil {
		t.seq, t.head = seq, head
		if _, undo := t.tx.StmtContext(ctx, t.st.rollbackTo).ExecContext(ctx); undo != nil {
			return err, undo
		}
		_, undo := t.tx.StmtContext(ctx, t.st.release).ExecContext(ctx)
		return err, undo
	}
	_, err = t.tx.StmtContext(ctx, t.st.release).ExecContext(ctx)
	return err, err
}

// event appends the chain entry recording row rowSeq of table tbl.
func (t *wtx) event(tbl string, rowSeq int64, payload []byte) error {
	hash := chainHash(t.head, payload)
	ctx := context.Background()
	if _, err := t.tx.StmtContext(ctx, t.st.insEvent).ExecContext(ctx, t.seq+1, tbl, rowSeq, string(payload), t.head, hash); err != nil {
		return err
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
	for _, st := range []*sql.Stmt{w.st.insDecision, w.st.insApproval, w.st.insUse, w.st.insEvent, w.st.savepoint, w.st.release, w.st.rollbackTo, w.st.head} {
		if st != nil {
			st.Close()
		}
	}
}
