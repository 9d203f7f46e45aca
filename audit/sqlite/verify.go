package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

// VerifyReport is the result of walking the log, and Break its first
// problem: the store-neutral types of package auditchain.
type (
	VerifyReport = auditchain.VerifyReport
	Break        = auditchain.Break
)

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
	v := &verifier{ctx: ctx, tx: tx, w: auditchain.NewWalker(&rep, want), prev: genesis}
	err = auditchain.RunChecks(&rep, func(err error) error { return l.storeErr("verify", err) },
		v.walk, v.headCheck, v.orphans, v.schema)
	return rep, err
}

type verifier struct {
	ctx context.Context
	tx  *sql.Tx
	w   *auditchain.Walker
	// prev is the hash of the event handed last.
	prev []byte
	// The decision_bodies rows, read in order: the current one cut into
	// bodies, where it begins and how many of them decisions read.
	bodies   *sql.Rows
	cur      [][]byte
	curFirst int64
	used     int
}

const walkSQL = `
SELECT e.seq, e.tbl, e.row_seq, e.payload, e.prev_hash, e.hash,
       a.seq, a.approval_id, a.decision_id, a.verdict, a.created_ns, a.body, a.body_sha256,
       u.seq, u.approval_id, u.used_by, u.used_ns
FROM events e
LEFT JOIN approvals a ON e.tbl = 'approvals' AND a.seq = e.row_seq
LEFT JOIN approval_uses u ON e.tbl = 'approval_uses' AND u.seq = e.row_seq
ORDER BY e.seq`

const walkDecisionsSQL = `
SELECT seq, event, decision_id, time_ns, outcome, proposition_id, credential, idem_key, approval_id, hash
FROM decisions ORDER BY seq`

// eventRow is one event and the row it names, if present. Absent joins
// scan NULL into the sql.Null* holders.
type eventRow struct {
	seq, rowSeq  int64
	tbl, payload string
	prev, hash   []byte

	aSeq, aCreated          sql.NullInt64
	aID, aDecision, aVerdct sql.NullString
	aBody, aSum             []byte

	uSeq, uUsed    sql.NullInt64
	uAppr, uUsedBy sql.NullString
}

// decisionEntry is a decisions row: its columns and chain entry.
type decisionEntry struct {
	row   decisionRow
	event int64
	hash  []byte
}

// walk hands the walker every event in order: the event rows (approvals
// and uses) and the decisions, which carry their own, merged by number.
func (v *verifier) walk() (*Break, error) {
	events, err := v.tx.QueryContext(v.ctx, walkSQL)
	if err != nil {
		return nil, err
	}
	defer events.Close()
	decisions, err := v.tx.QueryContext(v.ctx, walkDecisionsSQL)
	if err != nil {
		return nil, err
	}
	defer decisions.Close()
	bodies, err := v.tx.QueryContext(v.ctx, `SELECT first_event, bodies FROM decision_bodies ORDER BY first_event`)
	if err != nil {
		return nil, err
	}
	defer bodies.Close()
	v.bodies = bodies
	var e *eventRow
	var d *decisionEntry
	for {
		if e == nil {
			if e, err = nextEvent(events); err != nil {
				return nil, err
			}
		}
		if d == nil {
			if d, err = nextDecision(decisions); err != nil {
				return nil, err
			}
		}
		var brk *Break
		switch {
		case e == nil && d == nil:
			return v.bodiesLeft()
		case d == nil || (e != nil && e.seq < d.event):
			brk, e = v.event(e), nil
		default:
			brk, d = v.decision(d), nil
		}
		if brk != nil {
			return brk, nil
		}
	}
}

func nextEvent(rows *sql.Rows) (*eventRow, error) {
	if !rows.Next() {
		return nil, rows.Err()
	}
	var e eventRow
	err := rows.Scan(&e.seq, &e.tbl, &e.rowSeq, &e.payload, &e.prev, &e.hash,
		&e.aSeq, &e.aID, &e.aDecision, &e.aVerdct, &e.aCreated, &e.aBody, &e.aSum,
		&e.uSeq, &e.uAppr, &e.uUsedBy, &e.uUsed)
	return &e, err
}

func nextDecision(rows *sql.Rows) (*decisionEntry, error) {
	if !rows.Next() {
		return nil, rows.Err()
	}
	var d decisionEntry
	r := &d.row
	err := rows.Scan(&r.Seq, &d.event, &r.DecisionID, &r.TimeNS, &r.Outcome, &r.PropositionID, &r.Credential, &r.IdemKey, &r.ApprovalID, &d.hash)
	return &d, err
}

// event hands one event row and the row it names to the walker.
func (v *verifier) event(e *eventRow) *Break {
	v.prev = e.hash
	return v.w.Event(e.chainEvent())
}

// chainEvent is the event with the approval or use it names, if any.
func (e *eventRow) chainEvent() *auditchain.Event {
	ev := &auditchain.Event{Seq: e.seq, RowSeq: e.rowSeq, Table: e.tbl, Payload: e.payload, Prev: e.prev, Hash: e.hash}
	if e.aSeq.Valid {
		ev.Approval = &approvalRow{Seq: e.aSeq.Int64, ApprovalID: e.aID.String, DecisionID: e.aDecision.String,
			Verdict: e.aVerdct.String, CreatedNS: e.aCreated.Int64, Body: e.aBody, BodySum: e.aSum}
	}
	if e.uSeq.Valid {
		ev.Use = &Use{Seq: e.uSeq.Int64, ApprovalID: e.uAppr.String, UsedBy: e.uUsedBy.String, UsedNS: e.uUsed.Int64}
	}
	return ev
}

// decision hands a decision's chain entry to the walker: the payload it
// commits to is rebuilt from its body (so an edited body breaks the
// link), and its columns are compared with the body's (so no filter can
// be misled).
func (v *verifier) decision(d *decisionEntry) *Break {
	brk := func(format string, args ...any) *Break {
		return &Break{Seq: d.event, Table: tableDecisions, RowSeq: d.row.Seq, What: fmt.Sprintf(format, args...)}
	}
	body, err := v.body(d.event)
	if err != nil {
		return brk("%v", err)
	}
	dec, err := decodeDecision(body)
	if err != nil {
		return brk("%v", err)
	}
	derived := auditchain.DecisionColumns(dec, body)
	derived.Seq = d.row.Seq
	cols := d.row
	cols.Tool, cols.Body, cols.BodySum = derived.Tool, derived.Body, derived.BodySum
	ev := &auditchain.Event{Seq: d.event, RowSeq: d.row.Seq, Table: tableDecisions, Payload: string(derived.Payload()),
		Prev: v.prev, Hash: d.hash, Decision: &cols, FromBody: true}
	v.prev = d.hash
	return v.w.Event(ev)
}

// body returns the body of the decision at event from the
// decision_bodies rows, read in order alongside the walk; each row must
// hold exactly the bodies of consecutive decisions from its first_event.
func (v *verifier) body(event int64) ([]byte, error) {
	for v.cur == nil || event >= v.curFirst+int64(len(v.cur)) {
		if v.cur != nil && v.used != len(v.cur) {
			return nil, fmt.Errorf("decision_bodies row at event %d holds %d bodies but %d decisions read them (a body was added or a decision removed)", v.curFirst, len(v.cur), v.used)
		}
		if !v.bodies.Next() {
			if err := v.bodies.Err(); err != nil {
				return nil, err
			}
			return nil, errors.New("its body is gone (no decision_bodies row holds it)")
		}
		var row []byte
		if err := v.bodies.Scan(&v.curFirst, &row); err != nil {
			return nil, err
		}
		v.cur, v.used = splitBodies(row), 0
		if v.curFirst > event {
			return nil, fmt.Errorf("its body is gone: the next decision_bodies row begins at event %d", v.curFirst)
		}
	}
	i := event - v.curFirst
	if i < 0 || int(i) != v.used {
		return nil, fmt.Errorf("decision_bodies row at event %d is out of step with the decisions (body %d read after %d)", v.curFirst, i, v.used)
	}
	v.used++
	return v.cur[i], nil
}

// bodiesLeft, after the last event, finds bodies no decision reads.
func (v *verifier) bodiesLeft() (*Break, error) {
	if v.cur != nil && v.used != len(v.cur) {
		return &Break{Table: tableBodies, What: fmt.Sprintf("row at event %d holds %d bodies but %d decisions read them (a body was added or a decision removed)", v.curFirst, len(v.cur), v.used)}, nil
	}
	if v.bodies.Next() {
		var first int64
		var row []byte
		if err := v.bodies.Scan(&first, &row); err != nil {
			return nil, err
		}
		return &Break{Table: tableBodies, What: fmt.Sprintf("row at event %d is read by no decision (inserted behind the chain)", first)}, nil
	}
	return nil, v.bodies.Err()
}

// splitBodies cuts a decision_bodies row into its bodies; a row not ended
// by a newline keeps its last piece, which then fails to decode.
func splitBodies(row []byte) [][]byte {
	var out [][]byte
	for len(row) > 0 {
		i := bytes.IndexByte(row, '\n')
		if i < 0 {
			return append(out, row)
		}
		out = append(out, row[:i])
		row = row[i+1:]
	}
	return out
}

// headCheck finds a head that lies beyond the end of the chain.
func (v *verifier) headCheck() (*Break, error) { return v.w.HeadCheck(), nil }

// orphans finds rows that no event records (inserted behind the chain).
func (v *verifier) orphans() (*Break, error) {
	return v.w.Orphans(func(t string) (n int64, err error) {
		err = v.tx.QueryRowContext(v.ctx, `SELECT count(*) FROM `+t).Scan(&n)
		return n, err
	}, func(t string) (seq int64, err error) {
		// Every decisions row is walked, so only the tables with event
		// rows can hold one no event records (in version 1, which
		// Upgrade walks, decisions had event rows too).
		err = v.tx.QueryRowContext(v.ctx, `SELECT min(seq) FROM (SELECT seq FROM `+t+` EXCEPT SELECT row_seq FROM events WHERE tbl = ?)`, t).Scan(&seq)
		return seq, err
	})
}

// schema checks the version and that the append-only triggers are all
// there, unaltered, and alone: without them the file no longer refuses
// edits, even if none has been made yet.
func (v *verifier) schema() (*Break, error) {
	var ver string
	if err := v.tx.QueryRowContext(v.ctx, `SELECT value FROM audit_meta WHERE key = 'schema_version'`).Scan(&ver); err != nil || ver != strconv.Itoa(SchemaVersion) {
		return &Break{Table: "audit_meta", What: fmt.Sprintf("schema_version is %q, want %d (%v)", ver, SchemaVersion, err)}, nil
	}
	return v.triggers(triggers())
}

// triggers checks the file's triggers against want, name to definition.
func (v *verifier) triggers(want map[string]string) (*Break, error) {
	rows, err := v.tx.QueryContext(v.ctx, `SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	check := auditchain.NewTriggers(want)
	for rows.Next() {
		var name, tbl, ddl string
		if err := rows.Scan(&name, &tbl, &ddl); err != nil {
			return nil, err
		}
		if brk := check.Found(name, tbl, ddl); brk != nil {
			return brk, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return check.Missing(), nil
}
