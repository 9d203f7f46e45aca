package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ewp-go/ewp/audit/auditchain"
)

// writer is the log's group commit (auditchain.GroupCommit) over the
// pool. Over a network a commit costs round trips rather than disk, so a
// batch of Records needs two whatever its size (see inTx).
type writer struct {
	pool *pgxpool.Pool
	gc   *auditchain.GroupCommit[*op]
}

// op is one pending write. A Record is rec (its insert is pipelined with
// the other Records of its run); any other write is run, executed alone
// in the batch's transaction, and so is a Record that uses an approval
// (use, at now). Each succeeds, or is refused having changed nothing (no
// statement of it failed: conflicts are ON CONFLICT DO NOTHING, found by
// the missing row), or fails with an auditchain.TxError, after which the
// transaction is in doubt and the whole batch is rolled back.
type op struct {
	rec *auditchain.Record
	run func(t *wtx) error
	use bool
	now time.Time
}

// wtx is one batch transaction holding the chain lock, and the chain head
// within it; its events are sent in one statement before the commit.
type wtx struct {
	ctx  context.Context
	tx   *pgxpool.Conn
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
	w := &writer{pool: pool}
	w.gc = auditchain.StartGroupCommit(maxBatch, w.inTx)
	return w
}

// submit queues o and waits for the commit of its batch: nil means
// committed.
func (w *writer) submit(ctx context.Context, o *op) error {
	return w.gc.Submit(ctx, o)
}

// inTx runs a batch in one transaction, in as few round trips as its
// writes allow: BEGIN, the chain lock, the head and the first run of
// Records' INSERTs go in one pipeline; then the other writes, one by one
// (approvals and uses, rare), each later run of Records in a pipeline of
// its own; then the events and COMMIT in a last pipeline.
//
// The chain's order is the SQLite log's: the ops in the order they were
// queued, each run of consecutive Records sorted by decision_id. Row
// seqs are numbered here, each the table's greatest plus one (the chain
// lock is held), never by the IDENTITY sequence, which a refused insert
// or a rolled-back batch would leave with a gap: the seqs are hashed, so
// one history has one head on both stores.
//
// The transaction runs on ctx, which ends at the batch's latest deadline:
// a database that stops answering (frozen) fails the batch then, and
// whatever it had not committed is rolled back with the connection.
func (w *writer) inTx(ctx context.Context, batch []*op, errs []error) error {
	conn, err := w.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	// The pool closes a connection released inside a transaction rather
	// than reuse it; a clean failure is rolled back to keep it.
	defer conn.Release()
	t := &wtx{ctx: ctx, tx: conn}
	if err := t.run(batch, errs); err != nil {
		conn.Exec(ctx, `ROLLBACK`) //nolint:errcheck // the connection is dropped if this fails
		return err
	}
	return t.commit()
}

// checkGuards runs a batch's checks of the triggers and the tail in a
// transaction of its own, which writes nothing (Open, before the writer
// starts).
func checkGuards(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	t := &wtx{ctx: ctx, tx: conn}
	err = t.run(nil, nil)
	conn.Exec(ctx, `ROLLBACK`) //nolint:errcheck // the connection is dropped if this fails
	return err
}

// run writes the batch's ops in order: runs of Records through records,
// the others alone.
func (t *wtx) run(batch []*op, errs []error) error {
	for i := 0; i <= len(batch); {
		j := i
		for j < len(batch) && batch[j].rec != nil && !batch[j].use {
			j++
		}
		if i == 0 || j > i {
			if err := t.records(batch, errs, i, j); err != nil {
				return err
			}
		}
		if j == len(batch) {
			return nil
		}
		if o := batch[j]; o.use {
			errs[j] = t.recordUse(o)
		} else {
			errs[j] = o.run(t)
		}
		var te *auditchain.TxError
		if errors.As(errs[j], &te) {
			return te.Err
		}
		i = j + 1
	}
	return nil
}

// records sends the INSERTs of the Records batch[from:to], sorted by
// decision_id, in one pipeline (after BEGIN, the lock and the head when
// from is 0: the batch's first round trip) and reads their results; a
// Record that inserted nothing (ON CONFLICT) gets its refusal in errs.
func (t *wtx) records(batch []*op, errs []error, from, to int) error {
	pb := &pgx.Batch{}
	if from == 0 {
		pb.Queue(`BEGIN`)
		// Record promises a decision on record before its answer is sent,
		// whatever the server's or the pool's setting: with
		// synchronous_commit=off (a database tuned for ingest) a crash
		// would lose the last decisions in the WAL buffers after their
		// answers went out. SET LOCAL holds for this transaction only.
		pb.Queue(`SET LOCAL synchronous_commit = on`)
		pb.Queue(`SELECT pg_advisory_xact_lock($1)`, int64(chainLock))
		pb.Queue(walkSQL(true) + ` DESC LIMIT 1`)
		pb.Queue(`SELECT hash FROM ewp_audit.events ORDER BY seq DESC OFFSET 1 LIMIT 1`)
		pb.Queue(guardsSQL, triggerNames(), triggerDefs(), refuseBody)
	}
	recs := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		recs = append(recs, i)
	}
	slices.SortStableFunc(recs, func(a, b int) int {
		return strings.Compare(batch[a].rec.Row.DecisionID, batch[b].rec.Row.DecisionID)
	})
	for _, i := range recs {
		queueRecord(pb, &batch[i].rec.Row)
	}
	br := t.tx.SendBatch(t.ctx, pb)
	seqs, err := t.readRecords(br, from == 0, len(recs))
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("begin write transaction: %w", cerr)
	}
	if err != nil {
		return err
	}
	for k, i := range recs {
		r := batch[i].rec
		if seqs[k] == 0 {
			errs[i] = t.conflict(&r.Row)
			var te *auditchain.TxError
			if errors.As(errs[i], &te) {
				return te.Err
			}
			continue
		}
		t.event(auditchain.TableDecisions, seqs[k], r.Pre, r.Post)
	}
	return nil
}

func (t *wtx) readRecords(br pgx.BatchResults, begin bool, records int) ([]int64, error) {
	if begin {
		if err := t.readBegin(br); err != nil {
			return nil, err
		}
	}
	seqs := make([]int64, records)
	for k := range seqs {
		err := br.QueryRow().Scan(&seqs[k])
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("insert decisions: %w", err)
		}
	}
	return seqs, nil
}

func (t *wtx) readBegin(br pgx.BatchResults) error {
	for _, step := range []string{"begin write transaction", "set synchronous_commit", "lock the chain head"} {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("%s: %w", step, err)
		}
	}
	return t.readTail(br)
}

// guardsSQL counts the append-only triggers of the log that are in place,
// enabled and unaltered, and checks their function: one catalog query per
// batch, so a trigger dropped or disabled by anyone stops the next commit.
const guardsSQL = `SELECT
	(SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
		WHERE c.relnamespace = 'ewp_audit'::regnamespace AND t.tgname = ANY($1) AND t.tgenabled = 'O'
		AND pg_get_triggerdef(t.oid) = ANY($2)),
	COALESCE((SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure('ewp_audit.refuse_change()')) = $3, false)`

// readTail reads the chain head and refuses a broken log: the last
// event must link and record its row as it is (auditchain.CheckTail, the
// body included), and every append-only trigger must be there and
// enabled. Extending a broken log would bury the break.
func (t *wtx) readTail(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return fmt.Errorf("read chain head: %w", err)
	}
	var last *eventRow
	if rows.Next() {
		last = new(eventRow)
		err = last.scan(rows)
	}
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		return fmt.Errorf("read chain head: %w", err)
	}
	before := auditchain.Genesis()
	if err := br.QueryRow().Scan(&before); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read chain head: %w", err)
	}
	var triggers int
	var function bool
	if err := br.QueryRow().Scan(&triggers, &function); err != nil {
		return fmt.Errorf("check the append-only triggers: %w", err)
	}
	if want := len(triggerNames()); triggers != want || !function {
		return auditchain.BrokenLog(fmt.Sprintf("%d of the %d append-only triggers are missing, disabled or altered, or their function is", want-triggers, want))
	}
	t.seq, t.head = 0, auditchain.Genesis()
	if last == nil {
		return nil
	}
	if brk := auditchain.CheckTail(last.event(), before); brk != nil {
		return auditchain.BrokenLog(brk.Error())
	}
	t.seq, t.head = last.seq, last.hash
	return nil
}

// commit sends the batch's events in one statement and COMMIT, in one
// pipeline.
func (t *wtx) commit() error {
	pb := &pgx.Batch{}
	if len(t.ev.seq) > 0 {
		pb.Queue(`INSERT INTO ewp_audit.events (seq, tbl, row_seq, payload, prev_hash, hash)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::bytea[], $6::bytea[])`,
			t.ev.seq, t.ev.tbl, t.ev.rowSeq, t.ev.payload, t.ev.prev, t.ev.hash)
	}
	pb.Queue(`COMMIT`)
	br := t.tx.SendBatch(t.ctx, pb)
	defer br.Close()
	if len(t.ev.seq) > 0 {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("write chain events: %w", err)
		}
	}
	tag, err := br.Exec()
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if tag.String() != "COMMIT" {
		return fmt.Errorf("commit: the server answered %q", tag.String())
	}
	return br.Close()
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

// stop lets queued writes commit and ends the goroutine.
func (w *writer) stop() { w.gc.Stop() }
