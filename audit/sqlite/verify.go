package sqlite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/audit"
)

// VerifyReport is the result of walking the log.
type VerifyReport struct {
	Events    int64      `json:"events"`
	Decisions int64      `json:"decisions"`
	Approvals int64      `json:"approvals"`
	Uses      int64      `json:"approval_uses"`
	Head      audit.Head `json:"head"` // the last event checked
	// Broken is the first problem found, nil when the log is intact.
	Broken *Break `json:"broken,omitempty"`
}

// OK reports an intact log.
func (r VerifyReport) OK() bool { return r.Broken == nil }

// Break names the first broken or edited entry.
type Break struct {
	// Seq is the event's sequence number; 0 when the problem is a row no
	// event records, or the schema (a trigger).
	Seq    int64  `json:"event"`
	Table  string `json:"table"`
	RowSeq int64  `json:"row_seq,omitempty"`
	What   string `json:"what"`
}

func (b *Break) Error() string {
	if b.Seq == 0 {
		if b.RowSeq == 0 {
			return fmt.Sprintf("decision log broken: %s: %s", b.Table, b.What)
		}
		return fmt.Sprintf("decision log broken: %s row %d: %s", b.Table, b.RowSeq, b.What)
	}
	if b.RowSeq == 0 {
		return fmt.Sprintf("decision log broken at event %d: %s", b.Seq, b.What)
	}
	return fmt.Sprintf("decision log broken at event %d (%s row %d): %s", b.Seq, b.Table, b.RowSeq, b.What)
}

// Verify walks the hash chain from the first event and checks every row
// of decisions, approvals and approval_uses against the event that
// recorded it (and every body against its sha256 and the columns derived
// from it), then looks for rows no event records, and for the schema
// version and the append-only triggers. It stops at the first problem,
// which it returns both in the report and as the error (a *Break); other
// errors are I/O failures. It reads one consistent snapshot of the file,
// so it may run beside the server.
func (l *Log) Verify(ctx context.Context) (VerifyReport, error) {
	return l.verify(ctx, nil)
}

// VerifyHead is Verify plus a check that the chain still holds want (a
// head printed earlier by `ewp-audit verify`) unchanged: nothing was cut
// off the end or rewritten since, which no check from inside the file
// alone can see.
func (l *Log) VerifyHead(ctx context.Context, want audit.Head) (VerifyReport, error) {
	return l.verify(ctx, &want)
}

func (l *Log) verify(ctx context.Context, want *audit.Head) (VerifyReport, error) {
	var rep VerifyReport
	tx, err := l.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return rep, l.storeErr("verify", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	v := &verifier{ctx: ctx, tx: tx, rep: &rep, head: genesis, want: want, lastRow: map[string]int64{}}
	steps := []func() (*Break, error){v.walk, v.headCheck, v.orphans, v.schema}
	for _, step := range steps {
		brk, err := step()
		if err != nil {
			return rep, l.storeErr("verify", err)
		}
		if brk != nil {
			rep.Broken = brk
			return rep, brk
		}
	}
	return rep, nil
}

type verifier struct {
	ctx  context.Context
	tx   *sql.Tx
	rep  *VerifyReport
	head []byte
	want *audit.Head
	// lastRow is the last row_seq recorded per table: each event names a
	// later row than the one before, so no row is recorded twice.
	lastRow map[string]int64
}

const walkSQL = `
SELECT e.seq, e.tbl, e.row_seq, e.payload, e.prev_hash, e.hash,
       d.seq, d.decision_id, d.time_ns, d.tool, d.outcome, d.proposition_id, d.credential, d.idem_key, d.approval_id, d.body, d.body_sha256,
       a.seq, a.approval_id, a.decision_id, a.verdict, a.created_ns, a.body, a.body_sha256,
       u.seq, u.approval_id, u.used_by, u.used_ns
FROM events e
LEFT JOIN decisions d ON e.tbl = 'decisions' AND d.seq = e.row_seq
LEFT JOIN approvals a ON e.tbl = 'approvals' AND a.seq = e.row_seq
LEFT JOIN approval_uses u ON e.tbl = 'approval_uses' AND u.seq = e.row_seq
ORDER BY e.seq`

// eventRow is one event and the row it names, if present. Absent joins
// scan NULL into the sql.Null* holders.
type eventRow struct {
	seq, rowSeq  int64
	tbl, payload string
	prev, hash   []byte

	dSeq, dTime                       sql.NullInt64
	dID, dTool, dOutcome, dProp, dCrd sql.NullString
	dKey, dAppr                       sql.NullString
	dBody, dSum                       []byte

	aSeq, aCreated          sql.NullInt64
	aID, aDecision, aVerdct sql.NullString
	aBody, aSum             []byte

	uSeq, uUsed    sql.NullInt64
	uAppr, uUsedBy sql.NullString
}

func (v *verifier) walk() (*Break, error) {
	rows, err := v.tx.QueryContext(v.ctx, walkSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var e eventRow
		if err := rows.Scan(&e.seq, &e.tbl, &e.rowSeq, &e.payload, &e.prev, &e.hash,
			&e.dSeq, &e.dID, &e.dTime, &e.dTool, &e.dOutcome, &e.dProp, &e.dCrd, &e.dKey, &e.dAppr, &e.dBody, &e.dSum,
			&e.aSeq, &e.aID, &e.aDecision, &e.aVerdct, &e.aCreated, &e.aBody, &e.aSum,
			&e.uSeq, &e.uAppr, &e.uUsedBy, &e.uUsed); err != nil {
			return nil, err
		}
		if b := v.event(&e); b != nil {
			return b, nil
		}
	}
	return nil, rows.Err()
}

type breaker func(format string, args ...any) *Break

// event checks one link and the row it records.
func (v *verifier) event(e *eventRow) *Break {
	v.rep.Events++
	brk := func(format string, args ...any) *Break {
		return &Break{Seq: e.seq, Table: e.tbl, RowSeq: e.rowSeq, What: fmt.Sprintf(format, args...)}
	}
	switch {
	case e.seq != v.rep.Events:
		return brk("event %d is missing (events jump from %d to %d)", v.rep.Events, v.rep.Events-1, e.seq)
	case !bytes.Equal(e.prev, v.head):
		return brk("prev_hash does not match the hash of event %d", e.seq-1)
	case !bytes.Equal(e.hash, chainHash(e.prev, []byte(e.payload))):
		return brk("hash is not sha256(prev_hash || payload): the event itself was edited")
	}
	v.head = e.hash
	v.rep.Head = audit.Head{Seq: e.seq, Hash: hex.EncodeToString(e.hash)}
	if e.rowSeq <= v.lastRow[e.tbl] {
		return brk("records %s row %d after row %d: rows are recorded once and in order", e.tbl, e.rowSeq, v.lastRow[e.tbl])
	}
	v.lastRow[e.tbl] = e.rowSeq
	if w := v.want; w != nil && w.Seq == e.seq && w.Hash != v.rep.Head.Hash {
		return brk("the chain no longer holds the head %s: this event's hash is %s (the log was rewritten from here or before)", w, v.rep.Head.Hash)
	}
	switch e.tbl {
	case tableDecisions:
		return v.decisionRow(e, brk)
	case tableApprovals:
		return v.approvalRow(e, brk)
	case tableUses:
		return v.useRow(e, brk)
	}
	return brk("unknown table %q", e.tbl)
}

func (v *verifier) decisionRow(e *eventRow, brk breaker) *Break {
	v.rep.Decisions++
	if !e.dSeq.Valid {
		return brk("the decision row this event records is gone")
	}
	row := decisionRow{Seq: e.dSeq.Int64, DecisionID: e.dID.String, TimeNS: e.dTime.Int64, Tool: e.dTool.String,
		Outcome: e.dOutcome.String, PropositionID: e.dProp.String, Credential: e.dCrd.String, IdemKey: e.dKey,
		ApprovalID: e.dAppr.String, Body: e.dBody, BodySum: e.dSum}
	if d := payloadDiff(e.payload, row.payload()); d != "" {
		return brk("row differs from what the event recorded: %s", d)
	}
	if sum := sha256.Sum256(e.dBody); !bytes.Equal(sum[:], e.dSum) {
		return brk("body_sha256 column does not match the body: the decision's JSON was edited")
	}
	d, err := decodeDecision(e.dBody)
	if err != nil {
		return brk("%v", err)
	}
	derived := decisionColumns(d, e.dBody)
	derived.Seq = row.Seq
	if diff := payloadDiff(string(derived.payload()), row.payload()); diff != "" {
		return brk("columns disagree with the body: %s", diff)
	}
	return nil
}

func (v *verifier) approvalRow(e *eventRow, brk breaker) *Break {
	v.rep.Approvals++
	if !e.aSeq.Valid {
		return brk("the approval row this event records is gone")
	}
	row := approvalRow{Seq: e.aSeq.Int64, ApprovalID: e.aID.String, DecisionID: e.aDecision.String,
		Verdict: e.aVerdct.String, CreatedNS: e.aCreated.Int64, Body: e.aBody, BodySum: e.aSum}
	if d := payloadDiff(e.payload, row.payload()); d != "" {
		return brk("row differs from what the event recorded: %s", d)
	}
	if sum := sha256.Sum256(e.aBody); !bytes.Equal(sum[:], e.aSum) {
		return brk("body_sha256 column does not match the body: the approval's JSON was edited")
	}
	a, err := decodeApproval(e.aBody)
	if err != nil {
		return brk("%v", err)
	}
	derived := approvalColumns(a, e.aBody)
	derived.Seq = row.Seq
	if diff := payloadDiff(string(derived.payload()), row.payload()); diff != "" {
		return brk("columns disagree with the body: %s", diff)
	}
	return nil
}

func (v *verifier) useRow(e *eventRow, brk breaker) *Break {
	v.rep.Uses++
	if !e.uSeq.Valid {
		return brk("the approval use this event records is gone")
	}
	u := Use{Seq: e.uSeq.Int64, ApprovalID: e.uAppr.String, UsedBy: e.uUsedBy.String, UsedNS: e.uUsed.Int64}
	if d := payloadDiff(e.payload, u.payload()); d != "" {
		return brk("row differs from what the event recorded: %s", d)
	}
	return nil
}

// headCheck finds a head that lies beyond the end of the chain.
func (v *verifier) headCheck() (*Break, error) {
	if w := v.want; w != nil && w.Seq > v.rep.Events {
		return &Break{Seq: w.Seq, Table: "events", What: fmt.Sprintf("the chain ends at event %d, but head %s was recorded: events were cut off the end", v.rep.Events, w)}, nil
	}
	return nil, nil
}

// orphans finds rows that no event records (inserted behind the chain).
// The walk found one distinct, existing row per event; so a table holds an
// orphan exactly when it has more rows than the chain has events for it,
// and only then is the (unindexed) search for the first one run.
func (v *verifier) orphans() (*Break, error) {
	counted := map[string]int64{tableDecisions: v.rep.Decisions, tableApprovals: v.rep.Approvals, tableUses: v.rep.Uses}
	for _, t := range []string{tableDecisions, tableApprovals, tableUses} {
		var rows int64
		if err := v.tx.QueryRowContext(v.ctx, `SELECT count(*) FROM `+t).Scan(&rows); err != nil {
			return nil, err
		}
		if rows == counted[t] {
			continue
		}
		var seq int64
		err := v.tx.QueryRowContext(v.ctx, `SELECT min(seq) FROM (SELECT seq FROM `+t+` EXCEPT SELECT row_seq FROM events WHERE tbl = ?)`, t).Scan(&seq)
		if err != nil {
			return nil, err
		}
		return &Break{Table: t, RowSeq: seq, What: "row is not recorded by any event (inserted behind the chain)"}, nil
	}
	return nil, nil
}

// schema checks the version and that the append-only triggers are all
// there, unaltered, and alone: without them the file no longer refuses
// edits, even if none has been made yet.
func (v *verifier) schema() (*Break, error) {
	var ver string
	if err := v.tx.QueryRowContext(v.ctx, `SELECT value FROM audit_meta WHERE key = 'schema_version'`).Scan(&ver); err != nil || ver != strconv.Itoa(SchemaVersion) {
		return &Break{Table: "audit_meta", What: fmt.Sprintf("schema_version is %q, want %d (%v)", ver, SchemaVersion, err)}, nil
	}
	rows, err := v.tx.QueryContext(v.ctx, `SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	want := triggers()
	for rows.Next() {
		var name, tbl, ddl string
		if err := rows.Scan(&name, &tbl, &ddl); err != nil {
			return nil, err
		}
		exp, ok := want[name]
		switch {
		case !ok:
			return &Break{Table: tbl, What: fmt.Sprintf("trigger %s is not part of the log's schema: someone added it", name)}, nil
		case exp != ddl:
			return &Break{Table: tbl, What: fmt.Sprintf("trigger %s was altered", name)}, nil
		}
		delete(want, name)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(want) > 0 {
		names := make([]string, 0, len(want))
		for n := range want {
			names = append(names, n)
		}
		slices.Sort(names)
		tbl, _, _ := strings.Cut(names[0], "_no_")
		return &Break{Table: tbl, What: fmt.Sprintf("trigger %s is missing: the table no longer refuses edits", strings.Join(names, ", "))}, nil
	}
	return nil, nil
}

// payloadDiff names the fields in which the recorded payload and the one
// rebuilt from the row differ; "" when they are equal.
func payloadDiff(recorded string, now []byte) string {
	if recorded == string(now) {
		return ""
	}
	var a, b map[string]any
	if json.Unmarshal([]byte(recorded), &a) != nil || json.Unmarshal(now, &b) != nil {
		return "payload is not valid JSON"
	}
	var diffs []string
	for k := range b {
		if fmt.Sprint(a[k]) != fmt.Sprint(b[k]) {
			diffs = append(diffs, fmt.Sprintf("%s (event: %v, row now: %v)", k, a[k], b[k]))
		}
	}
	slices.Sort(diffs)
	if len(diffs) == 0 {
		return "payload text differs"
	}
	return strings.Join(diffs, "; ")
}
