package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/chain"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// Verify walks the hash chain from the first event and checks every stored
// row against the event that recorded it, every snapshot body against the
// kernel (it must decode and re-encode to the same bytes, with the stored
// canonical hash), that no row sits behind the chain, and that the derived
// tables (record identity index, search tables) hold exactly what the
// snapshots imply. It stops at the first problem, returned both in the
// report and as the error (a *ledger.Break), and that ledger_meta holds
// exactly the rows this build writes; other errors are I/O
// failures. It reads one consistent snapshot of the database (REPEATABLE
// READ), so it may run beside writers.
func (l *Ledger) Verify(ctx context.Context) (ledger.VerifyReport, error) {
	var rep ledger.VerifyReport
	tx, err := l.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return rep, ledgerErr("verify", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	v := &verifier{ctx: ctx, tx: tx, rep: &rep, head: chain.Genesis(),
		records: map[string]snapshot.Stored{}, props: map[string]bool{}, texts: map[string]string{}}
	steps := []func() (*ledger.Break, error){v.walk, v.orphans, v.derived, v.meta}
	for i, step := range steps {
		brk, err := step()
		if err != nil {
			return rep, err
		}
		if brk != nil {
			rep.Broken = brk
			return rep, brk
		}
		if i == 0 && rep.Events > 0 { // the whole chain has been walked
			rep.Head = ledger.Head{Seq: rep.Events, Hash: hex.EncodeToString(v.head)}
		}
	}
	return rep, nil
}

type verifier struct {
	ctx  context.Context
	tx   pgx.Tx
	rep  *ledger.VerifyReport
	head []byte
	// What the derived tables must hold, rebuilt from the snapshots: the
	// first content of every record id, every proposition, the first text
	// of every assertion id.
	records map[string]snapshot.Stored // recordKey → first stored
	props   map[string]bool
	texts   map[string]string // prop \x00 assertion id → searchable text
}

const walkSQL = `
SELECT e.seq, e.tbl, e.row_seq, e.payload, e.prev_hash, e.hash,
       s.seq, s.proposition_id, s.view_id, s.body, s.body_sha256, s.canonical_sha256, s.created_at,
       p.seq, p.primitive_id, p.name_fold, p.body, p.created_at
FROM events e
LEFT JOIN snapshots s ON e.tbl = 'snapshots' AND s.seq = e.row_seq
LEFT JOIN primitive_revisions p ON e.tbl = 'primitive_revisions' AND p.seq = e.row_seq
ORDER BY e.seq`

type eventRow struct {
	seq, rowSeq             int64
	tbl, payload            string
	prev, hash              []byte
	sSeq                    *int64
	sProp, sView            []byte
	sBody, sBodySum, sCanon []byte
	sCreated                *string
	pSeq                    *int64
	pID, pFold, pBody       []byte
	pCreated                *string
}

func (v *verifier) walk() (*ledger.Break, error) {
	rows, err := v.tx.Query(v.ctx, walkSQL)
	if err != nil {
		return nil, ledgerErr("verify", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e eventRow
		if err := rows.Scan(&e.seq, &e.tbl, &e.rowSeq, &e.payload, &e.prev, &e.hash,
			&e.sSeq, &e.sProp, &e.sView, &e.sBody, &e.sBodySum, &e.sCanon, &e.sCreated,
			&e.pSeq, &e.pID, &e.pFold, &e.pBody, &e.pCreated); err != nil {
			return nil, ledgerErr("verify", err)
		}
		if b := v.event(&e); b != nil {
			return b, nil
		}
	}
	return nil, ledgerErrOrNil("verify", rows.Err())
}

// event checks one link and the row it records.
func (v *verifier) event(e *eventRow) *ledger.Break {
	v.rep.Events++
	brk := func(format string, args ...any) *ledger.Break {
		return &ledger.Break{Seq: e.seq, Table: e.tbl, RowSeq: e.rowSeq, What: fmt.Sprintf(format, args...)}
	}
	if b := chain.CheckLink(e.seq, v.rep.Events, e.prev, v.head, e.hash, e.payload); b != "" {
		return brk("%s", b)
	}
	v.head = e.hash
	switch e.tbl {
	case chain.TableSnapshots:
		return v.snapshotRow(e, brk)
	case chain.TablePrimitives:
		return v.primitiveRow(e, brk)
	}
	return brk("unknown table %q", e.tbl)
}

type breaker func(format string, args ...any) *ledger.Break

func (v *verifier) snapshotRow(e *eventRow, brk breaker) *ledger.Break {
	v.rep.Snapshots++
	if e.sSeq == nil {
		return brk("the snapshot row this event records is gone")
	}
	bodySum := sha256.Sum256(e.sBody)
	now := chain.SnapshotPayload(*e.sSeq, string(e.sProp), string(e.sView), bodySum[:], e.sCanon, *e.sCreated)
	if d := chain.PayloadDiff(e.payload, now); d != "" {
		return brk("row differs from what the event recorded: %s", d)
	}
	if !bytes.Equal(bodySum[:], e.sBodySum) {
		return brk("body_sha256 column does not match the body")
	}
	view, err := warrant.DecodeView(e.sBody)
	if err != nil {
		return brk("body no longer decodes: %v", err)
	}
	if view.PropositionID != string(e.sProp) || view.ViewID != string(e.sView) {
		return brk("body names %s/%s, the row %s/%s", view.PropositionID, view.ViewID, e.sProp, e.sView)
	}
	if !bytes.Equal(warrant.Encode(view), e.sBody) {
		return brk("body does not re-encode to the same bytes (stored form is not canonical)")
	}
	if c := sha256.Sum256(warrant.Canonical(view)); !bytes.Equal(c[:], e.sCanon) {
		return brk("canonical_sha256 does not match the canonical form of the body")
	}
	return v.expect(view, brk)
}

// expect adds what the snapshot implies for the derived tables, and
// refuses a snapshot whose records contradict an earlier one's (§9).
func (v *verifier) expect(view *warrant.View, brk breaker) *ledger.Break {
	prop := view.PropositionID
	v.props[prop] = true
	for _, f := range snapshot.Fingerprints(view) {
		k := recordKey(prop, string(f.Kind), f.ID)
		if old, ok := v.records[k]; ok {
			if old.Sum != f.Sum {
				return brk("%s %q holds other content than in view %q (record identity, §9)", f.Kind, f.ID, old.ViewID)
			}
			continue
		}
		v.records[k] = snapshot.Stored{Sum: f.Sum, ViewID: view.ViewID}
		if f.Kind == snapshot.KindAssertion {
			v.texts[prop+"\x00"+f.ID] = searchable(assertionText(view, f.ID))
		}
	}
	return nil
}

func recordKey(prop, kind, id string) string { return prop + "\x00" + kind + "\x00" + id }

func (v *verifier) primitiveRow(e *eventRow, brk breaker) *ledger.Break {
	v.rep.Primitives++
	if e.pSeq == nil {
		return brk("the primitive revision this event records is gone")
	}
	now := chain.PrimitivePayload(*e.pSeq, string(e.pID), string(e.pFold), e.pBody, *e.pCreated)
	if d := chain.PayloadDiff(e.payload, now); d != "" {
		return brk("row differs from what the event recorded: %s", d)
	}
	return nil
}

// orphans finds rows that no event records (inserted behind the chain).
func (v *verifier) orphans() (*ledger.Break, error) {
	for _, t := range []string{chain.TableSnapshots, chain.TablePrimitives} {
		var seq int64
		err := v.tx.QueryRow(v.ctx, `SELECT seq FROM `+t+` x WHERE NOT EXISTS (SELECT 1 FROM events WHERE tbl = $1 AND row_seq = x.seq) ORDER BY seq LIMIT 1`, t).Scan(&seq)
		if isNoRows(err) {
			continue
		}
		if err != nil {
			return nil, ledgerErr("verify", err)
		}
		return &ledger.Break{Table: t, RowSeq: seq, What: "row is not recorded by any event (inserted behind the chain)"}, nil
	}
	return nil, nil
}

// derived compares the index tables with what the snapshots imply, both
// ways: a planted row and a missing one are both breaks.
func (v *verifier) derived() (*ledger.Break, error) {
	if b, err := v.derivedRecords(); b != nil || err != nil {
		return b, err
	}
	if b, err := v.derivedProps(); b != nil || err != nil {
		return b, err
	}
	return v.derivedTexts()
}

func derivedBreak(table, format string, args ...any) *ledger.Break {
	return &ledger.Break{Table: table, What: fmt.Sprintf(format, args...)}
}

func (v *verifier) derivedRecords() (*ledger.Break, error) {
	rows, err := v.tx.Query(v.ctx, `SELECT proposition_id, kind, record_id, sum, view_id FROM records`)
	if err != nil {
		return nil, ledgerErr("verify", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var prop, id, sum, view []byte
		var kind string
		if err := rows.Scan(&prop, &kind, &id, &sum, &view); err != nil {
			return nil, ledgerErr("verify", err)
		}
		want, ok := v.records[recordKey(string(prop), kind, string(id))]
		if !ok {
			return derivedBreak("records", "record index holds %s %q of %q, which no snapshot stores (planted row)", kind, id, prop), nil
		}
		if !bytes.Equal(sum, want.Sum[:]) || string(view) != want.ViewID {
			return derivedBreak("records", "record index holds other content for %s %q of %q than view %q stored first", kind, id, prop, want.ViewID), nil
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, ledgerErr("verify", err)
	}
	if n != len(v.records) {
		return derivedBreak("records", "record index lacks %d of the records the snapshots hold", len(v.records)-n), nil
	}
	return nil, nil
}

func (v *verifier) derivedProps() (*ledger.Break, error) {
	rows, err := v.tx.Query(v.ctx, `SELECT proposition_id, id_fold FROM propositions`)
	if err != nil {
		return nil, ledgerErr("verify", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var prop []byte
		var fold string
		if err := rows.Scan(&prop, &fold); err != nil {
			return nil, ledgerErr("verify", err)
		}
		if !v.props[string(prop)] || fold != searchable(string(prop)) {
			return derivedBreak("propositions", "search index row for %q matches no stored proposition", prop), nil
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, ledgerErr("verify", err)
	}
	if n != len(v.props) {
		return derivedBreak("propositions", "search index lacks %d stored propositions", len(v.props)-n), nil
	}
	return nil, nil
}

func (v *verifier) derivedTexts() (*ledger.Break, error) {
	rows, err := v.tx.Query(v.ctx, `SELECT proposition_id, assertion_id, text_fold FROM assertion_text`)
	if err != nil {
		return nil, ledgerErr("verify", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var prop, id []byte
		var text string
		if err := rows.Scan(&prop, &id, &text); err != nil {
			return nil, ledgerErr("verify", err)
		}
		want, ok := v.texts[string(prop)+"\x00"+string(id)]
		if !ok || want != text {
			return derivedBreak("assertion_text", "search index text of assertion %q of %q is not the stored assertion's", id, prop), nil
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, ledgerErr("verify", err)
	}
	if n != len(v.texts) {
		return derivedBreak("assertion_text", "search index lacks %d stored assertions", len(v.texts)-n), nil
	}
	return nil, nil
}

// metaKeys are the ledger_meta rows a PostgreSQL ledger holds (Init
// writes both), with the values this build accepts.
var metaKeys = map[string]string{"schema_version": strconv.Itoa(SchemaVersion), "search_text": "casefold"}

// meta checks ledger_meta: exactly the rows this build writes, as the
// SQLite ledger's Verify does; an extra or changed row is a Break.
func (v *verifier) meta() (*ledger.Break, error) {
	rows, err := v.tx.Query(v.ctx, `SELECT key, value FROM ledger_meta ORDER BY key`)
	if err != nil {
		return nil, ledgerErr("verify: read ledger_meta", err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var k, val string
		if err := rows.Scan(&k, &val); err != nil {
			return nil, ledgerErr("verify: read ledger_meta", err)
		}
		if want, ok := metaKeys[k]; !ok || val != want {
			return &ledger.Break{Table: "ledger_meta", What: fmt.Sprintf("row %q = %q is not one this build writes", k, val)}, nil
		}
		seen++
	}
	if err := rows.Err(); err != nil {
		return nil, ledgerErr("verify: read ledger_meta", err)
	}
	if seen != len(metaKeys) {
		return &ledger.Break{Table: "ledger_meta", What: fmt.Sprintf("%d of its %d rows are missing", len(metaKeys)-seen, len(metaKeys))}, nil
	}
	return nil, nil
}
