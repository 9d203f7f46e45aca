package postgres

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ewp-go/ewp/audit/auditchain"
)

// writer is the group commit, as in the SQLite log: one goroutine takes
// every pending write off one channel, and whatever queued while the
// previous commit ran goes into the next transaction. Over a network a
// commit costs round trips rather than disk, so a batch is built to need
// few whatever its size: BEGIN; the chain lock and head; every Record's
// INSERT pipelined in one batch; all events in one INSERT; COMMIT.
type writer struct {
	pool     *pgxpool.Pool
	ops      chan *op
	maxBatch int
	quit     chan struct{}
	wg       sync.WaitGroup
	mu       sync.RWMutex // held shared by submitters, exclusively by stop
	stopped  bool
	// commits and written count transactions and the writes they carried.
	commits, written atomic.Int64
}

// op is one pending write. A Record is rec (its insert is pipelined with
// the batch's other Records); any other write is run, executed alone in
// the batch's transaction. Either succeeds, or is refused having changed
// nothing (no statement of it failed: conflicts are ON CONFLICT DO
// NOTHING, found by the missing row), or fails with a *txError, after
// which the transaction is in doubt and the whole batch is rolled back.
type op struct {
	rec  *recordOp
	run  func(t *wtx) error
	done chan error
}

// txError marks a failure in the middle of a batch's writes.
type txError struct{ err error }

func (e *txError) Error() string { return e.err.Error() }
func (e *txError) Unwrap() error { return e.err }

func inDoubt(err error) error {
	if err == nil {
		return nil
	}
	return &txError{err}
}

// wtx is one batch transaction holding the chain lock, and the chain head
// within it; its events are sent in one statement before the commit.
type wtx struct {
	ctx  context.Context
	tx   pgx.Tx
	seq  int64
	head []byte
	buf  []byte
	ev   eventCols
}

type eventCols struct {
	seq, rowSeq []int64
	tbl         []string
	payload     []string
	prev, hash  [][]byte
}

func startWriter(pool *pgxpool.Pool, maxBatch int) *writer {
	w := &writer{pool: pool, ops: make(chan *op, 4*maxBatch), maxBatch: maxBatch, quit: make(chan struct{})}
	w.wg.Add(1)
	go w.loop()
	return w
}

// submit queues o and waits for the commit of its batch. It waits even
// when ctx ends meanwhile, so its answer is exact: nil means committed.
func (w *writer) submit(ctx context.Context, o *op) error {
	o.done = make(chan error, 1)
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

// gather fills the batch with what is queued, yielding once to let
// callers woken by the previous commit submit again (see the SQLite
// writer, whose reasoning holds the more for a commit of round trips).
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

// commit runs a batch in one transaction. Refused ops changed nothing and
// the others still commit; a failure inside an op, or of the commit,
// fails the whole batch.
func (w *writer) commit(batch []*op) {
	w.commits.Add(1)
	w.written.Add(int64(len(batch)))
	errs := make([]error, len(batch))
	err := w.inTx(func(t *wtx) error {
		for i := 0; i < len(batch); {
			if batch[i].rec != nil {
				j := i + 1
				for j < len(batch) && batch[j].rec != nil {
					j++
				}
				if err := t.records(batch[i:j], errs[i:j]); err != nil {
					return err
				}
				i = j
				continue
			}
			errs[i] = batch[i].run(t)
			var te *txError
			if errors.As(errs[i], &te) {
				return te.err
			}
			i++
		}
		return t.flushEvents()
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
	tx, err := w.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin write transaction: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // no-op after Commit
	t := &wtx{ctx: ctx, tx: tx}
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, int64(chainLock))
	b.Queue(`SELECT seq, hash FROM ewp_audit.events ORDER BY seq DESC LIMIT 1`)
	br := tx.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return fmt.Errorf("lock the chain head: %w", err)
	}
	err = br.QueryRow().Scan(&t.seq, &t.head)
	if errors.Is(err, pgx.ErrNoRows) {
		t.seq, t.head, err = 0, auditchain.Genesis, nil
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("read chain head: %w", err)
	}
	if err := fn(t); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// event queues the chain entry recording row rowSeq of table tbl, whose
// payload is pre + rowSeq + post (auditchain.SplitPayload).
func (t *wtx) event(tbl string, rowSeq int64, pre, post []byte) {
	t.buf = append(strconv.AppendInt(append(t.buf[:0], pre...), rowSeq, 10), post...)
	hash := auditchain.Hash(t.head, t.buf)
	t.seq++
	t.ev.seq = append(t.ev.seq, t.seq)
	t.ev.tbl = append(t.ev.tbl, tbl)
	t.ev.rowSeq = append(t.ev.rowSeq, rowSeq)
	t.ev.payload = append(t.ev.payload, string(t.buf))
	t.ev.prev = append(t.ev.prev, t.head)
	t.ev.hash = append(t.ev.hash, hash)
	t.head = hash
}

// flushEvents writes the batch's events in one statement.
func (t *wtx) flushEvents() error {
	if len(t.ev.seq) == 0 {
		return nil
	}
	_, err := t.tx.Exec(t.ctx, `INSERT INTO ewp_audit.events (seq, tbl, row_seq, payload, prev_hash, hash)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::bytea[], $6::bytea[])`,
		t.ev.seq, t.ev.tbl, t.ev.rowSeq, t.ev.payload, t.ev.prev, t.ev.hash)
	if err != nil {
		return fmt.Errorf("write chain events: %w", err)
	}
	return nil
}

// stop lets queued writes commit and ends the goroutine.
func (w *writer) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	close(w.quit)
	w.wg.Wait()
}
