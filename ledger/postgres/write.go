package postgres

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/chain"
	"github.com/ewp-go/ewp/internal/pgurl"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/snapshot"
)

// chainLock is the advisory lock every write transaction takes first. The
// chain has one head, so writers take turns: the holder reads the head and
// the next sequence numbers, appends, and commits before the lock is let
// go (pg_advisory_xact_lock is released at the end of the transaction,
// after its rows became visible), so the next holder's reads see them.
// Advisory locks are per database, so ledgers in two databases of one
// server do not wait for each other. The primary keys on the sequence
// numbers would refuse a fork even if a writer skipped the lock.
const chainLock = pgurl.LockLedgerChain

// wtx is one write transaction holding the chain lock.
type wtx struct {
	ctx     context.Context
	tx      pgx.Tx
	now     string
	evSeq   int64
	head    []byte
	snapSeq int64
	primSeq int64
	props   map[string]*propState
	pend    pending
	maxBody int64 // Options.MaxViewBytes, resolved
}

// propState is everything the transaction knows about one proposition:
// loaded once from the database, then kept up to date in memory, so the
// §9 checks of a batch cost no query per view.
type propState struct {
	existed bool
	views   map[string]storedRef
	idx     snapshot.Map
}

type storedRef struct {
	sum [32]byte
	seq int64
}

// pending rows go to the server by COPY, a batch at a time.
type pending struct {
	snaps, events, records, props, texts [][]any
	// bytes is the size of the pending snapshot bodies and assertion
	// texts: a count of rows alone would let a load of large views hold
	// thousands of bodies (hundreds of MB) in memory until the next COPY.
	bytes int
}

// flushRows is how many pending rows of all tables trigger a COPY, and
// flushBytes how many bytes of bodies and texts do, whichever comes first.
const (
	flushRows  = 4096
	flushBytes = 8 << 20
)

// write runs fn in one transaction holding the chain lock: all of it
// commits or none.
func (l *Ledger) write(ctx context.Context, fn func(w *wtx) error) error {
	if l.ro {
		return l.errReadOnly()
	}
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return ledgerErr("begin write transaction", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after Commit
	w := &wtx{ctx: ctx, tx: tx, now: l.now().UTC().Format(time.RFC3339Nano), props: map[string]*propState{}, maxBody: l.maxBody}
	if err := w.init(); err != nil {
		return ledgerErr("begin write", err)
	}
	if err := fn(w); err != nil {
		return err
	}
	if err := w.flush(); err != nil {
		return err
	}
	return ledgerErrOrNil("commit", tx.Commit(ctx))
}

// ErrBrokenChain is package ledger's, as the SQLite store's is: wrapped
// by the error of a write refused because the chain is visibly broken at
// its tail.
var ErrBrokenChain = ledger.ErrBrokenChain

func brokenChain(what string) error {
	return fmt.Errorf("%w (%s); nothing was written: run `ewp-ingest verify --db URL` to see what changed, and restore the database from a copy that verifies", ErrBrokenChain, what)
}

// tailSQL reads, after the lock is granted, the last two events, the
// newest rows of each table, the rows the chain records last, and how many
// of the append-only triggers of this schema are in place and enabled.
const tailSQL = `SELECT
	(SELECT COALESCE(MAX(seq), 0) FROM snapshots), (SELECT COALESCE(MAX(seq), 0) FROM primitive_revisions),
	(SELECT COALESCE(MAX(row_seq), 0) FROM events WHERE tbl = 'snapshots'),
	(SELECT COALESCE(MAX(row_seq), 0) FROM events WHERE tbl = 'primitive_revisions'),
	(SELECT count(*) FROM pg_trigger WHERE tgname = ANY($1) AND tgenabled = 'O'
		AND tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = current_schema()::regnamespace))`

type tailEvent struct {
	seq        int64
	payload    string
	prev, hash []byte
}

// init takes the chain lock and reads the head and the sequence numbers,
// in one round trip (the statements of a batch run in order, each seeing
// what was committed before it began, so the reads see the last holder's
// commit). It checks in constant time what can be checked before
// extending the chain: the last link recomputes, the newest rows are the
// ones the chain records, and the append-only triggers are all there and
// enabled. Deeper edits are Verify's to find.
func (w *wtx) init() error {
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock($1)`, int64(chainLock))
	b.Queue(`SELECT seq, payload, prev_hash, hash FROM events ORDER BY seq DESC LIMIT 2`)
	b.Queue(tailSQL, triggerNames())
	br := w.tx.SendBatch(w.ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		if isCode(err, "57014") { // query_canceled: statement_timeout while waiting
			return fmt.Errorf("another writer held the chain longer than the statement timeout (a large ingest?); retry, or open with a longer Options.StatementTimeout: %w", err)
		}
		return fmt.Errorf("lock the chain head: %w", err)
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tailEvent, error) {
		var e tailEvent
		return e, r.Scan(&e.seq, &e.payload, &e.prev, &e.hash)
	})
	if err != nil {
		return err
	}
	var evSnaps, evPrims int64
	var triggers int
	if err := br.QueryRow().Scan(&w.snapSeq, &w.primSeq, &evSnaps, &evPrims, &triggers); err != nil {
		return err
	}
	if err := w.checkLink(evs); err != nil {
		return err
	}
	if evSnaps != w.snapSeq || evPrims != w.primSeq {
		return brokenChain(fmt.Sprintf("the newest rows (snapshot %d, graph revision %d) are not the ones the chain records (%d, %d)", w.snapSeq, w.primSeq, evSnaps, evPrims))
	}
	if triggers != len(triggerNames()) {
		return brokenChain(fmt.Sprintf("%d of the %d append-only triggers are missing or disabled", len(triggerNames())-triggers, len(triggerNames())))
	}
	return nil
}

// checkLink checks the last event (evs[0]) against the one before it and
// sets the head from it.
func (w *wtx) checkLink(evs []tailEvent) error {
	w.evSeq, w.head = 0, chain.Genesis()
	if len(evs) == 0 {
		return nil
	}
	last, wantSeq, wantPrev := evs[0], int64(1), chain.Genesis()
	if len(evs) == 2 {
		wantSeq, wantPrev = evs[1].seq+1, evs[1].hash
	}
	switch {
	case last.seq != wantSeq:
		return brokenChain(fmt.Sprintf("last event %d follows event %d", last.seq, wantSeq-1))
	case !bytes.Equal(last.prev, wantPrev):
		return brokenChain(fmt.Sprintf("last event %d: prev_hash is not the hash of the event before", last.seq))
	case !bytes.Equal(last.hash, chain.Hash(last.prev, []byte(last.payload))):
		return brokenChain(fmt.Sprintf("last event %d: hash is not sha256(prev_hash || payload)", last.seq))
	}
	w.evSeq, w.head = last.seq, last.hash
	return nil
}

// event queues one link of the hash chain.
func (w *wtx) event(tbl string, rowSeq int64, payload []byte) {
	hash := chain.Hash(w.head, payload)
	w.evSeq++
	w.pend.events = append(w.pend.events, []any{w.evSeq, tbl, rowSeq, string(payload), w.head, hash})
	w.head = hash
}

func (p *pending) size() int {
	return len(p.snaps) + len(p.events) + len(p.records) + len(p.props) + len(p.texts)
}

var copies = []struct {
	table string
	cols  []string
	rows  func(p *pending) *[][]any
}{
	{"snapshots", []string{"seq", "proposition_id", "view_id", "body", "body_sha256", "canonical_sha256", "created_at"}, func(p *pending) *[][]any { return &p.snaps }},
	{"events", []string{"seq", "tbl", "row_seq", "payload", "prev_hash", "hash"}, func(p *pending) *[][]any { return &p.events }},
	{"records", []string{"proposition_id", "kind", "record_id", "sum", "view_id"}, func(p *pending) *[][]any { return &p.records }},
	{"propositions", []string{"proposition_id", "id_fold"}, func(p *pending) *[][]any { return &p.props }},
	{"assertion_text", []string{"proposition_id", "assertion_id", "text_fold"}, func(p *pending) *[][]any { return &p.texts }},
}

// smallFlush is the most pending rows sent as INSERTs in one batch
// rather than by COPY: a COPY costs a round trip or two per table, which
// for the handful of rows of an append is most of the write.
const smallFlush = 64

// flush sends every pending row: a large load one COPY per table (per
// row, COPY costs the server a fraction of what an INSERT does), a small
// write all its INSERTs in one round trip.
func (w *wtx) flush() error {
	if n := w.pend.size(); n == 0 {
		return nil
	} else if n <= smallFlush {
		return w.insertAll()
	}
	for _, c := range copies {
		rows := c.rows(&w.pend)
		if len(*rows) == 0 {
			continue
		}
		if _, err := w.tx.CopyFrom(w.ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(*rows)); err != nil {
			return ledgerErr("write "+c.table, err)
		}
		*rows = (*rows)[:0]
	}
	w.pend.bytes = 0
	return nil
}

func (w *wtx) insertAll() error {
	b := &pgx.Batch{}
	for _, c := range copies {
		rows := c.rows(&w.pend)
		q := insertSQL(c.table, c.cols)
		for _, r := range *rows {
			b.Queue(q, r...)
		}
		*rows = (*rows)[:0]
	}
	w.pend.bytes = 0
	return ledgerErrOrNil("write", w.tx.SendBatch(w.ctx, b).Close())
}

func insertSQL(table string, cols []string) string {
	ps := make([]string, len(cols))
	for i := range cols {
		ps[i] = fmt.Sprintf("$%d", i+1)
	}
	return "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(ps, ", ") + ")"
}

func (w *wtx) flushFull() error {
	if w.pend.size() >= flushRows || w.pend.bytes >= flushBytes {
		return w.flush()
	}
	return nil
}
