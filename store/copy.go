package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/ewp-go/ewp/chain"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/postgres"
	"github.com/ewp-go/ewp/warrant"
)

// CopyReport says what a Copy did.
type CopyReport struct {
	Events int64       // events copied by this run
	Head   ledger.Head // the chain head both ledgers now have
}

// copyPage is how many events a Copy reads and writes at a time.
const copyPage = 1000

// Copy copies the ledger at from into the ledger at to (each a file path
// or a postgres:// URL), event by event: every snapshot and graph revision
// is stored again in chain order with its created_at, through the
// destination's own rules, so the destination builds the same chain and
// ends with the same head, which Copy checks. The destination is created
// when missing; when it already holds events they must be the source's
// first ones (an earlier, interrupted copy), and the copy resumes after
// them. The source is only read and may be in use; events appended to it
// during the copy are copied up to the head seen last.
func Copy(ctx context.Context, from, to string) (CopyReport, error) {
	var rep CopyReport
	src, err := openSource(ctx, from)
	if err != nil {
		return rep, err
	}
	defer src.close()
	var created string // created_at of the events being replayed
	now := func() time.Time {
		t, _ := time.Parse(time.RFC3339Nano, created)
		return t
	}
	dst, err := Open(ctx, to, Options{Create: true, Now: now, MaxViewBytes: -1})
	if err != nil {
		return rep, err
	}
	defer dst.Close()
	after, err := resumePoint(ctx, src, dst)
	if err != nil {
		return rep, err
	}
	for {
		evs, err := src.events(ctx, after, copyPage)
		if err != nil {
			return rep, err
		}
		if len(evs) == 0 {
			break
		}
		for len(evs) > 0 {
			n := run(evs)
			created = evs[0].CreatedAt
			if err := replay(ctx, dst, evs[:n]); err != nil {
				return rep, fmt.Errorf("copy event %d: %w", evs[0].Seq, err)
			}
			rep.Events += int64(n)
			after = evs[n-1].Seq
			evs = evs[n:]
		}
	}
	return rep, checkHeads(ctx, src, dst, after, &rep)
}

// run is the length of the leading run of events of one table and one
// created_at: one source transaction (or several at the same instant),
// replayed as one write.
func run(evs []chain.Event) int {
	n := 1
	for n < len(evs) && evs[n].Table == evs[0].Table && evs[n].CreatedAt == evs[0].CreatedAt {
		n++
	}
	return n
}

// replay stores one run of events and checks that the destination
// numbered them as the source did.
func replay(ctx context.Context, dst Ledger, evs []chain.Event) error {
	e := evs[0]
	if e.CreatedAt == "" {
		return fmt.Errorf("the source's %s row %d is gone: run verify on the source", e.Table, e.RowSeq)
	}
	if t, err := time.Parse(time.RFC3339Nano, e.CreatedAt); err != nil || t.UTC().Format(time.RFC3339Nano) != e.CreatedAt {
		return fmt.Errorf("created_at %q is not in the form this build writes, so the copy could not keep it", e.CreatedAt)
	}
	switch e.Table {
	case chain.TableSnapshots:
		return replaySnapshots(ctx, dst, evs)
	case chain.TablePrimitives:
		return replayPrimitives(ctx, dst, evs)
	}
	return fmt.Errorf("event %d records unknown table %q", e.Seq, e.Table)
}

func replaySnapshots(ctx context.Context, dst Ledger, evs []chain.Event) error {
	res, err := dst.PutEach(ctx, len(evs), func(i int) (*warrant.View, error) {
		return warrant.DecodeView(evs[i].Body)
	})
	if err != nil {
		return err
	}
	if res.Stored != len(evs) {
		return fmt.Errorf("the destination already held %d of these snapshots: it is not a copy of this source", len(evs)-res.Stored)
	}
	for i, o := range res.Views {
		if o.Seq != evs[i].RowSeq {
			return fmt.Errorf("snapshot %s/%s became row %d, the source's is row %d: the destination is not a copy of this source", o.PropositionID, o.ViewID, o.Seq, evs[i].RowSeq)
		}
	}
	return nil
}

func replayPrimitives(ctx context.Context, dst Ledger, evs []chain.Event) error {
	rows := make([]ledger.PrimitiveRow, len(evs))
	for i, e := range evs {
		rows[i] = ledger.PrimitiveRow{ID: e.PrimitiveID, NameFold: e.NameFold, Body: e.Body}
	}
	return dst.AppendPrimitives(ctx, func([]ledger.PrimitiveRow) ([]ledger.PrimitiveRow, error) { return rows, nil })
}

// resumePoint is the last event the destination shares with the source.
func resumePoint(ctx context.Context, src source, dst Ledger) (int64, error) {
	h, err := dst.Head(ctx)
	if err != nil || h.Seq == 0 {
		return 0, err
	}
	evs, err := src.events(ctx, h.Seq-1, 1)
	if err != nil {
		return 0, err
	}
	if len(evs) == 0 || evs[0].Seq != h.Seq || hex.EncodeToString(evs[0].Hash) != h.Hash {
		return 0, fmt.Errorf("the destination holds events (head %s) that are not the source's first ones; copy into an empty ledger", h)
	}
	return h.Seq, nil
}

// checkHeads confirms that the destination ends where the source did.
func checkHeads(ctx context.Context, src source, dst Ledger, last int64, rep *CopyReport) error {
	h, err := dst.Head(ctx)
	if err != nil {
		return err
	}
	rep.Head = h
	if h.Seq != last {
		return fmt.Errorf("the destination ends at event %d, the source at %d", h.Seq, last)
	}
	if last == 0 {
		return nil
	}
	evs, err := src.events(ctx, last-1, 1)
	if err != nil {
		return err
	}
	if len(evs) != 1 || hex.EncodeToString(evs[0].Hash) != h.Hash {
		return fmt.Errorf("chain heads differ after the copy (destination %s): the stores disagree on the chain", h)
	}
	return nil
}

// source lists a ledger's events for a copy.
type source interface {
	events(ctx context.Context, after int64, limit int) ([]chain.Event, error)
	close()
}

func openSource(ctx context.Context, dsn string) (source, error) {
	l, err := Open(ctx, dsn, Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	if pg, ok := l.(*postgres.Ledger); ok {
		return pgSource{pg}, nil
	}
	l.Close()
	// The SQLite ledger exposes no event listing; its tables (schema
	// version 1, checked by the Open above) are read directly, read-only.
	path := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(dsn)
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(30000)")
	if err != nil {
		return nil, err
	}
	return sqliteSource{db}, nil
}

type pgSource struct{ l *postgres.Ledger }

func (s pgSource) events(ctx context.Context, after int64, limit int) ([]chain.Event, error) {
	return s.l.Events(ctx, after, limit)
}
func (s pgSource) close() { s.l.Close() }

type sqliteSource struct{ db *sql.DB }

const sqliteEventsSQL = `
SELECT e.seq, e.tbl, e.row_seq, e.hash,
       COALESCE(s.created_at, p.created_at), COALESCE(s.body, p.body),
       s.proposition_id, s.view_id, p.primitive_id, p.name_fold
FROM events e
LEFT JOIN snapshots s ON e.tbl = 'snapshots' AND s.seq = e.row_seq
LEFT JOIN primitive_revisions p ON e.tbl = 'primitive_revisions' AND p.seq = e.row_seq
WHERE e.seq > ? ORDER BY e.seq LIMIT ?`

func (s sqliteSource) events(ctx context.Context, after int64, limit int) ([]chain.Event, error) {
	rows, err := s.db.QueryContext(ctx, sqliteEventsSQL, after, limit)
	if err != nil {
		return nil, &ledger.Error{Op: "read events", Err: err}
	}
	defer rows.Close()
	var out []chain.Event
	for rows.Next() {
		var e chain.Event
		var created, prop, view, prim, fold sql.NullString
		if err := rows.Scan(&e.Seq, &e.Table, &e.RowSeq, &e.Hash, &created, &e.Body, &prop, &view, &prim, &fold); err != nil {
			return nil, &ledger.Error{Op: "read events", Err: err}
		}
		e.CreatedAt, e.PropositionID, e.ViewID, e.PrimitiveID, e.NameFold = created.String, prop.String, view.String, prim.String, fold.String
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, &ledger.Error{Op: "read events", Err: err}
	}
	return out, nil
}
func (s sqliteSource) close() { s.db.Close() }
