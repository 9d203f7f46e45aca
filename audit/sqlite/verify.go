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
	v := &verifier{ctx: ctx, tx: tx, w: auditchain.NewWalker(&rep, want), prev: genesis()}
	if v.ext, err = hasAgentTables(ctx, tx); err != nil {
		return rep, l.storeErr("verify", err)
	}
	err = auditchain.RunChecks(&rep, func(err error) error { return l.storeErr("verify", err) },
		v.walk, v.headCheck, v.orphans, v.onceKeys, v.schema)
	return rep, err
}

type verifier struct {
	ctx context.Context
	tx  *sql.Tx
	w   *auditchain.Walker
	// prev is the hash of the event handed last.
	prev []byte
	// row looks a decision's row up by its id; decisions counts those
	// found, which must be every row of the table.
	row       *sql.Stmt
	decisions int64
	// maxID is the greatest in-order decision_id walked so far.
	maxID string
	// ext: the log has the tables added with agent identities.
	ext bool
}

// walkSQL reads the events with the rows they name; with ext, the rows
// of the tables added with agent identities too (NULLs when the log has
// none, so one scan serves both).
func walkSQL(ext bool) string {
	extCols := `NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL`
	extJoins := ""
	if ext {
		extCols = `ag.seq, ag.name, ag.credential_sha256, ag.created_ns, ag.body, ag.body_sha256,
       rv.seq, rv.name, rv.revoked_ns,
       rs.seq, rs.decision_id, rs.status, rs.time_ns, rs.body, rs.body_sha256`
		extJoins = `
LEFT JOIN agents ag ON e.tbl = 'agents' AND ag.seq = e.row_seq
LEFT JOIN agent_revocations rv ON e.tbl = 'agent_revocations' AND rv.seq = e.row_seq
LEFT JOIN results rs ON e.tbl = 'results' AND rs.seq = e.row_seq`
	}
	return `
SELECT e.seq, e.tbl, e.row_seq, e.payload, e.prev_hash, e.hash,
       a.seq, a.approval_id, a.decision_id, a.verdict, a.created_ns, a.body, a.body_sha256,
       u.seq, u.approval_id, u.used_by, u.used_ns,
       ` + extCols + `
FROM events e
LEFT JOIN approvals a ON e.tbl = 'approvals' AND a.seq = e.row_seq
LEFT JOIN approval_uses u ON e.tbl = 'approval_uses' AND u.seq = e.row_seq` + extJoins + `
ORDER BY e.seq`
}

const decisionRowSQL = `
SELECT seq, event, decision_id, time_ns, outcome, proposition_id, credential, idem_key, approval_id, hash
FROM decisions WHERE decision_id = ?`

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

	agSeq, agCreated     sql.NullInt64
	agName, agCred       sql.NullString
	agBody, agSum        []byte
	rvSeq, rvRevoked     sql.NullInt64
	rvName               sql.NullString
	rsSeq, rsTime        sql.NullInt64
	rsDecision, rsStatus sql.NullString
	rsBody, rsSum        []byte
}

// bodiesSQL reads the decision_bodies rows in event order.
const bodiesSQL = `SELECT first_event, first_seq, n, head, first_id, last_id, bodies FROM decision_bodies ORDER BY first_event`

// bodiesRow is a decision_bodies row cut into its bodies, and how many of
// them the walk has handed on; firstID and lastID are its columns, and
// seenFirst and seenLast the in-order ids the walk found in it ("" for
// none: an empty id is never in order).
type bodiesRow struct {
	first, firstSeq, n  int64
	head                []byte
	firstID, lastID     sql.NullString
	seenFirst, seenLast string
	bodies              [][]byte
	used                int
}

// walk hands the walker every event in event order, merging two
// streams: the events rows (approvals and uses, with their rows joined)
// and the decisions, whose bodies the decision_bodies rows hold, a row's
// decisions at consecutive events from its first_event. Whichever stream
// has the lower event number next goes first.
func (v *verifier) walk() (*Break, error) {
	events, err := v.tx.QueryContext(v.ctx, walkSQL(v.ext))
	if err != nil {
		return nil, err
	}
	defer events.Close()
	bodies, err := v.tx.QueryContext(v.ctx, bodiesSQL)
	if err != nil {
		return nil, err
	}
	defer bodies.Close()
	if v.row, err = v.tx.PrepareContext(v.ctx, decisionRowSQL); err != nil {
		return nil, err
	}
	defer v.row.Close()
	e, err := nextEvent(events)
	var b *bodiesRow
	for err == nil {
		if b == nil || b.used == len(b.bodies) {
			if b, err = nextBodies(bodies); err != nil {
				return nil, err
			}
			if brk := b.malformed(); brk != nil {
				return brk, nil
			}
		}
		var brk *Break
		switch {
		case e == nil && b == nil:
			return nil, nil
		case b == nil || (e != nil && e.seq < b.first+int64(b.used)):
			brk = v.event(e)
			e, err = nextEvent(events)
		default:
			brk, err = v.decision(b)
		}
		if brk != nil {
			return brk, nil
		}
	}
	return nil, err
}

// nextEvent reads the next event, nil after the last.
func nextEvent(rows *sql.Rows) (*eventRow, error) {
	if !rows.Next() {
		return nil, rows.Err()
	}
	var e eventRow
	err := rows.Scan(&e.seq, &e.tbl, &e.rowSeq, &e.payload, &e.prev, &e.hash,
		&e.aSeq, &e.aID, &e.aDecision, &e.aVerdct, &e.aCreated, &e.aBody, &e.aSum,
		&e.uSeq, &e.uAppr, &e.uUsedBy, &e.uUsed,
		&e.agSeq, &e.agName, &e.agCred, &e.agCreated, &e.agBody, &e.agSum,
		&e.rvSeq, &e.rvName, &e.rvRevoked,
		&e.rsSeq, &e.rsDecision, &e.rsStatus, &e.rsTime, &e.rsBody, &e.rsSum)
	return &e, err
}

// nextBodies reads the next decision_bodies row, nil after the last.
func nextBodies(rows *sql.Rows) (*bodiesRow, error) {
	if !rows.Next() {
		return nil, rows.Err()
	}
	var b bodiesRow
	var raw []byte
	if err := rows.Scan(&b.first, &b.firstSeq, &b.n, &b.head, &b.firstID, &b.lastID, &raw); err != nil {
		return nil, err
	}
	b.bodies = splitBodies(raw)
	return &b, nil
}

// malformed finds a row whose count of bodies is not the one it says (or
// is none: a row no commit writes).
func (b *bodiesRow) malformed() *Break {
	switch {
	case b == nil:
		return nil
	case len(b.bodies) == 0:
		return &Break{Seq: b.first, Table: tableBodies, What: fmt.Sprintf("the row at event %d holds no body (inserted behind the chain)", b.first)}
	case int64(len(b.bodies)) != b.n:
		return &Break{Seq: b.first, Table: tableBodies, What: fmt.Sprintf("the row at event %d holds %d bodies but says %d (a body was added or removed)", b.first, len(b.bodies), b.n)}
	}
	return nil
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
	switch {
	case e.agSeq.Valid:
		ev.Row = &auditchain.AgentRow{Seq: e.agSeq.Int64, Name: e.agName.String, CredentialSHA256: e.agCred.String,
			CreatedNS: e.agCreated.Int64, Body: e.agBody, BodySum: e.agSum}
	case e.rvSeq.Valid:
		ev.Row = &auditchain.RevocationRow{Seq: e.rvSeq.Int64, Name: e.rvName.String, RevokedNS: e.rvRevoked.Int64}
	case e.rsSeq.Valid:
		ev.Row = &auditchain.ResultRow{Seq: e.rsSeq.Int64, DecisionID: e.rsDecision.String, Status: e.rsStatus.String,
			TimeNS: e.rsTime.Int64, Body: e.rsBody, BodySum: e.rsSum}
	}
	return ev
}

// decision hands the next decision of b to the walker: the payload its
// event commits to is rebuilt from its body (so an edited body breaks the
// link). A special decision's row, found by the body's decision_id, must
// hold that event, its place and hash, and columns that agree with the
// body (so no lookup or filter can be misled); any other decision has no
// row, and its hash is the one computed (an edited body then breaks the
// next link, or its row's head).
func (v *verifier) decision(b *bodiesRow) (*Break, error) {
	i := b.used
	b.used++
	event, seq := b.first+int64(i), b.firstSeq+int64(i)
	brk := func(format string, args ...any) *Break {
		return &Break{Seq: event, Table: tableDecisions, RowSeq: seq, What: fmt.Sprintf(format, args...)}
	}
	body := b.bodies[i]
	dec, err := decodeDecision(body)
	if err != nil {
		return brk("%v", err), nil
	}
	derived := auditchain.DecisionColumns(dec, body)
	derived.Seq = seq
	inOrder := derived.DecisionID > v.maxID
	if inOrder {
		v.maxID = derived.DecisionID
		if b.seenFirst == "" {
			b.seenFirst = derived.DecisionID
		}
		b.seenLast = derived.DecisionID
	}
	r, hash := derived, chainHash(v.prev, derived.Payload())
	if special(&derived, inOrder) {
		var brk *Break
		if r, hash, brk, err = v.decisionRow(&derived, event); brk != nil || err != nil {
			return brk, err
		}
	}
	ev := &auditchain.Event{Seq: event, RowSeq: seq, Table: tableDecisions, Payload: string(derived.Payload()),
		Prev: v.prev, Hash: hash, Decision: &r, FromBody: true}
	v.prev = hash
	if brk := v.w.Event(ev); brk != nil {
		return brk, nil
	}
	if b.used < len(b.bodies) {
		return nil, nil
	}
	return b.ended(hash), nil
}

// ended checks a decision_bodies row the walk has read to its end: its
// head must be its last decision's hash, and its first_id and last_id the
// in-order ids it holds (a lookup by id trusts them).
func (b *bodiesRow) ended(last []byte) *Break {
	if !bytes.Equal(b.head, last) {
		return &Break{Seq: b.first, Table: tableBodies, What: fmt.Sprintf("the row at event %d names a head that is not its last decision's hash: a body in it, or a decision's hash, was edited", b.first)}
	}
	got, want := idsText(b.firstID, b.lastID), idsText(nullable(b.seenFirst), nullable(b.seenLast))
	if got != want {
		return &Break{Seq: b.first, Table: tableBodies, What: fmt.Sprintf("the row at event %d says first_id … last_id %s, but the in-order ids it holds are %s: a lookup by id would miss or mistake a decision", b.first, got, want)}
	}
	return nil
}

// nullable is id as its column holds it: NULL for "".
func nullable(id string) sql.NullString { return sql.NullString{String: id, Valid: id != ""} }

// idsText shows a row's first_id … last_id, "NULL" for a NULL.
func idsText(first, last sql.NullString) string {
	show := func(n sql.NullString) string {
		if !n.Valid {
			return "NULL"
		}
		return strconv.Quote(n.String)
	}
	return show(first) + " … " + show(last)
}

// decisionRow reads a special decision's row into r and hash and checks
// that it is there and in step with its body (event and seq).
func (v *verifier) decisionRow(derived *decisionRow, event int64) (r decisionRow, hash []byte, _ *Break, _ error) {
	seq := derived.Seq
	brk := func(format string, args ...any) *Break {
		return &Break{Seq: event, Table: tableDecisions, RowSeq: seq, What: fmt.Sprintf(format, args...)}
	}
	var rowEvent int64
	err := v.row.QueryRowContext(v.ctx, derived.DecisionID).Scan(&r.Seq, &rowEvent, &r.DecisionID, &r.TimeNS, &r.Outcome,
		&r.PropositionID, &r.Credential, &r.IdemKey, &r.ApprovalID, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return r, nil, brk("the decision row of this body (decision_id %s) is gone", derived.DecisionID), nil
	}
	if err != nil {
		return r, nil, nil, err
	}
	if rowEvent != event || r.Seq != seq {
		return r, nil, brk("the row of decision %s says event %d, row %d: rows and bodies are out of step", derived.DecisionID, rowEvent, r.Seq), nil
	}
	v.decisions++
	r.Tool, r.Body, r.BodySum = derived.Tool, derived.Body, derived.BodySum
	return r, hash, nil, nil
}

// headCheck finds a head that lies beyond the end of the chain.
func (v *verifier) headCheck() (*Break, error) { return v.w.HeadCheck(), nil }

// orphans finds rows that no event records (inserted behind the chain):
// in decisions, more rows than the walk found special decisions for (only
// those have rows, so the table's count is not the chain's); in approvals
// and uses, as for any chained table.
func (v *verifier) orphans() (*Break, error) {
	rows, err := v.count(tableDecisions)
	if err != nil {
		return nil, err
	}
	if rows != v.decisions {
		return &Break{Table: tableDecisions, What: fmt.Sprintf("the table holds %d rows but the chain has %d decisions that need one: a row was inserted behind the chain", rows, v.decisions)}, nil
	}
	tables := []string{tableApprovals, tableUses}
	if v.ext {
		tables = append(tables, auditchain.AgentTables...)
	}
	return v.w.Orphans(tables, v.count, v.firstUnrecorded)
}

// onceKeys checks approval_keys against the chained approvals.
func (v *verifier) onceKeys() (*Break, error) {
	if !v.ext {
		return nil, nil
	}
	keys, err := readOnceKeys(v.ctx, v.tx)
	if err != nil {
		return nil, err
	}
	return v.w.OnceKeys(keys), nil
}

// readOnceKeys reads every approval_keys row.
func readOnceKeys(ctx context.Context, tx *sql.Tx) ([]auditchain.OnceKey, error) {
	rows, err := tx.QueryContext(ctx, `SELECT approval_seq, approval_id, agent, any_agent, tool_name, arguments_hash, until_ns FROM approval_keys`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []auditchain.OnceKey
	for rows.Next() {
		var k auditchain.OnceKey
		if err := rows.Scan(&k.ApprovalSeq, &k.ApprovalID, &k.Agent, &k.AnyAgent, &k.ToolName, &k.ArgumentsHash, &k.UntilNS); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// count is how many rows table t holds.
func (v *verifier) count(t string) (n int64, err error) {
	err = v.tx.QueryRowContext(v.ctx, `SELECT count(*) FROM `+t).Scan(&n)
	return n, err
}

// firstUnrecorded is the first row of table t that no event records.
func (v *verifier) firstUnrecorded(t string) (seq int64, err error) {
	err = v.tx.QueryRowContext(v.ctx, `SELECT min(seq) FROM (SELECT seq FROM `+t+` EXCEPT SELECT row_seq FROM events WHERE tbl = ?)`, t).Scan(&seq)
	return seq, err
}

// schema checks the version and that the append-only triggers are all
// there, unaltered, and alone: without them the file no longer refuses
// edits, even if none has been made yet.
func (v *verifier) schema() (*Break, error) {
	var ver string
	if err := v.tx.QueryRowContext(v.ctx, `SELECT value FROM audit_meta WHERE key = 'schema_version'`).Scan(&ver); err != nil || ver != strconv.Itoa(SchemaVersion) {
		return &Break{Table: "audit_meta", What: fmt.Sprintf("schema_version is %q, want %d (%v)", ver, SchemaVersion, err)}, nil
	}
	return triggersBreak(v.ctx, v.tx, triggers(v.ext))
}
