package sqlite

import (
	"github.com/ewp-go/ewp/ledger"

	"bytes"
	"cmp"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"slices"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/warrant"
)

// The derived pass reads the snapshots in (proposition_id, seq) order,
// re-derives for each proposition the rows the writer put in the record
// index and the search index, and merges them against those tables read
// in the same order. Memory holds one proposition's records at a time.
const (
	derivedSnapsSQL = `SELECT seq, proposition_id, view_id, body, body_sha256, canonical_sha256 FROM snapshots ORDER BY proposition_id, seq`
	derivedRecsSQL  = `SELECT proposition_id, kind, record_id, sum, view_id FROM records ORDER BY proposition_id, kind, record_id`
	// The search index has no index on its UNINDEXED columns: SQLite sorts
	// it (spilling to a temporary file when large), which keeps memory
	// bounded.
	derivedFTSSQL = `SELECT proposition_id, assertion_id, text FROM assertion_fts ORDER BY proposition_id, assertion_id`
)

// expRecord is a record index row as the snapshots derive it.
type expRecord struct {
	key  snapshot.Key
	sum  snapshot.Sum
	view string
	seq  int64 // the snapshot that first held it
}

// expText is a search index row as the snapshots derive it.
type expText struct {
	id, text string
	seq      int64
}

// group is one proposition's derived rows.
type group struct {
	prop  string
	recs  map[snapshot.Key]expRecord
	texts []expText
}

// derived runs the pass; see the comment on the SQL above.
func (v *verifier) derived() (*ledger.Break, error) {
	snaps, err := v.tx.QueryContext(v.ctx, derivedSnapsSQL)
	if err != nil {
		return nil, ledgerErr("verify", err)
	}
	defer snaps.Close()
	recs, err := newCursor(v, derivedRecsSQL, 5)
	if err != nil {
		return nil, err
	}
	defer recs.close()
	fts, err := newCursor(v, derivedFTSSQL, 3)
	if err != nil {
		return nil, err
	}
	defer fts.close()
	var g *group
	for snaps.Next() {
		var r snapRow
		var body, bodySum, canon []byte
		if err := snaps.Scan(&r.seq, &r.prop, &r.view, &body, &bodySum, &canon); err != nil {
			return nil, ledgerErr("verify", err)
		}
		if g == nil || g.prop != r.prop {
			if brk, err := v.closeGroup(g, recs, fts); brk != nil || err != nil {
				return brk, err
			}
			g = &group{prop: r.prop, recs: map[snapshot.Key]expRecord{}}
		}
		if brk, err := v.snapshotBody(g, &r, body, bodySum, canon); brk != nil || err != nil {
			return brk, err
		}
	}
	if err := snaps.Err(); err != nil {
		return nil, ledgerErr("verify", err)
	}
	if brk, err := v.closeGroup(g, recs, fts); brk != nil || err != nil {
		return brk, err
	}
	if brk := extraRecord(recs, nil); brk != nil {
		return brk, nil
	}
	return extraText(fts, nil), nil
}

// snapshotBody re-reads one body with the kernel: it must hash to
// body_sha256, decode, name its own row, re-encode to the same bytes and
// have the stored canonical hash. Its first-seen records join the group.
func (v *verifier) snapshotBody(g *group, r *snapRow, body, bodySum, canon []byte) (*ledger.Break, error) {
	brk := func(format string, args ...any) (*ledger.Break, error) {
		return v.snapshotBreak(r.seq, fmt.Sprintf(format, args...))
	}
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], bodySum) {
		return brk("body_sha256 column does not match the body")
	}
	d := decoders.Get().(*warrant.Decoder)
	view, err := d.DecodeView(body)
	decoders.Put(d)
	if err != nil {
		return brk("body no longer decodes: %v", err)
	}
	if view.PropositionID != r.prop || view.ViewID != r.view {
		return brk("body names %s/%s, the row %s/%s", view.PropositionID, view.ViewID, r.prop, r.view)
	}
	if !bytes.Equal(warrant.Encode(view), body) {
		return brk("body does not re-encode to the same bytes (stored form is not canonical)")
	}
	if c := sha256.Sum256(warrant.Canonical(view)); !bytes.Equal(c[:], canon) {
		return brk("canonical_sha256 does not match the canonical form of the body")
	}
	for _, f := range snapshot.Fingerprints(view) {
		old, ok := g.recs[f.Key]
		if !ok {
			g.recs[f.Key] = expRecord{key: f.Key, sum: f.Sum, view: r.view, seq: r.seq}
			continue
		}
		if old.sum != f.Sum {
			return brk("%s %q holds other content than in snapshot %q (a §9 identity the writer refuses)", f.Kind, f.ID, old.view)
		}
	}
	for _, a := range view.Assertions {
		k := snapshot.Key{Kind: snapshot.KindAssertion, ID: a.AssertionID}
		if g.recs[k].seq == r.seq {
			g.texts = append(g.texts, expText{id: a.AssertionID, text: v.ftsText(a.Text), seq: r.seq})
		}
	}
	return nil, nil
}

// snapshotBreak names the event that recorded snapshot seq.
func (v *verifier) snapshotBreak(seq int64, what string) (*ledger.Break, error) {
	var ev int64
	err := v.tx.QueryRowContext(v.ctx, `SELECT seq FROM events WHERE tbl = 'snapshots' AND row_seq = ?`, seq).Scan(&ev)
	if err != nil {
		return nil, ledgerErr("verify", err)
	}
	return &ledger.Break{Seq: ev, Table: tableSnapshots, RowSeq: seq, What: what}, nil
}

// closeGroup compares one proposition's derived rows with the tables.
func (v *verifier) closeGroup(g *group, recs, fts *cursor) (*ledger.Break, error) {
	if g == nil {
		return nil, nil
	}
	if brk, err := v.compareRecords(g, recs); brk != nil || err != nil {
		return brk, err
	}
	return v.compareTexts(g, fts)
}

func (v *verifier) compareRecords(g *group, recs *cursor) (*ledger.Break, error) {
	if brk := extraRecord(recs, &g.prop); brk != nil {
		return brk, nil
	}
	want := make([]expRecord, 0, len(g.recs))
	for _, r := range g.recs {
		want = append(want, r)
	}
	slices.SortFunc(want, func(a, b expRecord) int {
		return cmp.Or(cmp.Compare(a.key.Kind, b.key.Kind), cmp.Compare(a.key.ID, b.key.ID))
	})
	for _, w := range want {
		if recs.ok && recs.str(0) == g.prop {
			kind, id := recs.str(1), recs.str(2)
			if c := cmp.Or(cmp.Compare(kind, string(w.key.Kind)), cmp.Compare(id, w.key.ID)); c < 0 {
				return extraRecordRow(recs), nil
			} else if c == 0 {
				if !bytes.Equal(recs.bytes(3), w.sum[:]) || recs.str(4) != w.view {
					return v.snapshotBreak(w.seq, fmt.Sprintf("record index holds other content for %s %q than this snapshot", w.key.Kind, w.key.ID))
				}
				if err := recs.next(); err != nil {
					return nil, err
				}
				continue
			}
		}
		return v.snapshotBreak(w.seq, fmt.Sprintf("record index lacks %s %q", w.key.Kind, w.key.ID))
	}
	if recs.ok && recs.str(0) == g.prop {
		return extraRecordRow(recs), nil
	}
	return nil, nil
}

func (v *verifier) compareTexts(g *group, fts *cursor) (*ledger.Break, error) {
	if brk := extraText(fts, &g.prop); brk != nil {
		return brk, nil
	}
	slices.SortFunc(g.texts, func(a, b expText) int { return cmp.Compare(a.id, b.id) })
	for _, w := range g.texts {
		if fts.ok && fts.str(0) == g.prop {
			if c := cmp.Compare(fts.str(1), w.id); c < 0 {
				return extraTextRow(fts), nil
			} else if c == 0 {
				if fts.str(2) != w.text {
					return v.snapshotBreak(w.seq, fmt.Sprintf("search index holds other text for assertion %q than this snapshot", w.id))
				}
				if err := fts.next(); err != nil {
					return nil, err
				}
				continue
			}
		}
		return v.snapshotBreak(w.seq, fmt.Sprintf("search index lacks assertion %q", w.id))
	}
	if fts.ok && fts.str(0) == g.prop {
		return extraTextRow(fts), nil
	}
	return nil, nil
}

// extraRecord reports a record index row of a proposition ordered before
// prop (nil: any row left), which then has no snapshot at all. A NULL
// proposition_id reads as "" and sorts first, as in SQLite.
func extraRecord(recs *cursor, prop *string) *ledger.Break {
	if recs.ok && (prop == nil || recs.str(0) < *prop) {
		return extraRecordRow(recs)
	}
	return nil
}

func extraRecordRow(recs *cursor) *ledger.Break {
	return &ledger.Break{Table: "records", What: fmt.Sprintf("row (%q, %s %q, view %q) is derived from no stored snapshot (inserted behind the chain); a later write of that id would be refused citing it",
		recs.str(0), recs.str(1), recs.str(2), recs.str(4))}
}

func extraText(fts *cursor, prop *string) *ledger.Break {
	if fts.ok && (prop == nil || fts.str(0) < *prop) {
		return extraTextRow(fts)
	}
	return nil
}

func extraTextRow(fts *cursor) *ledger.Break {
	return &ledger.Break{Table: "assertion_fts", What: fmt.Sprintf("row (%q, assertion %q) is derived from no stored snapshot (inserted behind the chain); a search would find it",
		fts.str(0), fts.str(1))}
}

// cursor is a result set read one row ahead, for merging.
type cursor struct {
	v    *verifier
	rows *sql.Rows
	vals []sql.RawBytes
	ok   bool // a row is loaded
}

func newCursor(v *verifier, q string, n int) (*cursor, error) {
	rows, err := v.tx.QueryContext(v.ctx, q)
	if err != nil {
		return nil, ledgerErr("verify", err)
	}
	c := &cursor{v: v, rows: rows, vals: make([]sql.RawBytes, n)}
	return c, c.next()
}

func (c *cursor) next() error {
	c.ok = c.rows.Next()
	if !c.ok {
		return ledgerErrOrNil("verify", c.rows.Err())
	}
	dst := make([]any, len(c.vals))
	for i := range c.vals {
		dst[i] = &c.vals[i]
	}
	return ledgerErrOrNil("verify", c.rows.Scan(dst...))
}

func (c *cursor) str(i int) string   { return string(c.vals[i]) }
func (c *cursor) bytes(i int) []byte { return c.vals[i] }

func (c *cursor) close() { c.rows.Close() }
