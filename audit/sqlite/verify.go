package sqlite

import (
	"context"
	"database/sql"
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
	v := &verifier{ctx: ctx, tx: tx, w: auditchain.NewWalker(&rep, want)}
	err = auditchain.RunChecks(&rep, func(err error) error { return l.storeErr("verify", err) },
		v.walk, v.headCheck, v.orphans, v.schema)
	return rep, err
}

type verifier struct {
	ctx context.Context
	tx  *sql.Tx
	w   *auditchain.Walker
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

// event hands one event and the row it names to the walker.
func (v *verifier) event(e *eventRow) *Break {
	ev := &auditchain.Event{Seq: e.seq, RowSeq: e.rowSeq, Table: e.tbl, Payload: e.payload, Prev: e.prev, Hash: e.hash}
	if e.dSeq.Valid {
		ev.Decision = &decisionRow{Seq: e.dSeq.Int64, DecisionID: e.dID.String, TimeNS: e.dTime.Int64, Tool: e.dTool.String,
			Outcome: e.dOutcome.String, PropositionID: e.dProp.String, Credential: e.dCrd.String, IdemKey: e.dKey,
			ApprovalID: e.dAppr.String, Body: e.dBody, BodySum: e.dSum}
	}
	if e.aSeq.Valid {
		ev.Approval = &approvalRow{Seq: e.aSeq.Int64, ApprovalID: e.aID.String, DecisionID: e.aDecision.String,
			Verdict: e.aVerdct.String, CreatedNS: e.aCreated.Int64, Body: e.aBody, BodySum: e.aSum}
	}
	if e.uSeq.Valid {
		ev.Use = &Use{Seq: e.uSeq.Int64, ApprovalID: e.uAppr.String, UsedBy: e.uUsedBy.String, UsedNS: e.uUsed.Int64}
	}
	return v.w.Event(ev)
}

// headCheck finds a head that lies beyond the end of the chain.
func (v *verifier) headCheck() (*Break, error) { return v.w.HeadCheck(), nil }

// orphans finds rows that no event records (inserted behind the chain).
func (v *verifier) orphans() (*Break, error) {
	return v.w.Orphans(func(t string) (n int64, err error) {
		err = v.tx.QueryRowContext(v.ctx, `SELECT count(*) FROM `+t).Scan(&n)
		return n, err
	}, func(t string) (seq int64, err error) {
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
	rows, err := v.tx.QueryContext(v.ctx, `SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	check := auditchain.NewTriggers(triggers())
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
