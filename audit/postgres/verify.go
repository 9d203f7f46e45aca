package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

// Verify walks the hash chain from the first event and checks every row
// against the event that recorded it, as the SQLite log's Verify does
// (the same walk: auditchain.Walker), then looks for rows no event
// records, the schema version, and the append-only triggers: each present,
// enabled, unaltered, alone, and their function unaltered. It reads one
// snapshot (REPEATABLE READ), so it may run beside the servers. The first
// problem is returned in the report and as the error (a
// *auditchain.Break); other errors are I/O failures.
func (l *Log) Verify(ctx context.Context) (auditchain.VerifyReport, error) {
	return l.verify(ctx, nil)
}

// VerifyHead is Verify plus a check that the chain still holds want (a
// head printed earlier) unchanged.
func (l *Log) VerifyHead(ctx context.Context, want audit.Head) (auditchain.VerifyReport, error) {
	return l.verify(ctx, &want)
}

func (l *Log) verify(ctx context.Context, want *audit.Head) (auditchain.VerifyReport, error) {
	var rep auditchain.VerifyReport
	tx, err := l.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return rep, l.storeErr("verify", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	v := &verifier{ctx: ctx, tx: tx, w: auditchain.NewWalker(&rep, want)}
	if v.ext, err = hasAgentTables(ctx, tx); err != nil {
		return rep, l.storeErr("verify", err)
	}
	err = auditchain.RunChecks(&rep, func(err error) error { return l.storeErr("verify", err) },
		v.walk, v.headCheck, v.orphans, v.onceKeys, v.schema)
	return rep, err
}

type verifier struct {
	ctx context.Context
	tx  pgx.Tx
	w   *auditchain.Walker
	// ext: the log has the tables added with agent identities.
	ext bool
}

// walkSQL reads the events with the rows they name; with ext, the rows
// of the tables added with agent identities too (typed NULLs when the
// log has none, so one scan serves both).
func walkSQL(ext bool) string {
	extCols := `NULL::bigint, NULL::text, NULL::text, NULL::bigint, NULL::bytea, NULL::bytea,
       NULL::bigint, NULL::text, NULL::bigint,
       NULL::bigint, NULL::bytea, NULL::text, NULL::bigint, NULL::bytea, NULL::bytea`
	extJoins := ""
	if ext {
		extCols = `ag.seq, ag.name, ag.credential_sha256, ag.created_ns, ag.body, ag.body_sha256,
       rv.seq, rv.name, rv.revoked_ns,
       rs.seq, rs.decision_id, rs.status, rs.time_ns, rs.body, rs.body_sha256`
		extJoins = `
LEFT JOIN ewp_audit.agents ag ON e.tbl = 'agents' AND ag.seq = e.row_seq
LEFT JOIN ewp_audit.agent_revocations rv ON e.tbl = 'agent_revocations' AND rv.seq = e.row_seq
LEFT JOIN ewp_audit.results rs ON e.tbl = 'results' AND rs.seq = e.row_seq`
	}
	return `
SELECT e.seq, e.tbl, e.row_seq, e.payload, e.prev_hash, e.hash,
       d.seq, d.decision_id, d.time_ns, d.tool, d.outcome, d.proposition_id, d.credential, d.idem_key, d.approval_id, d.body, d.body_sha256,
       a.seq, a.approval_id, a.decision_id, a.verdict, a.created_ns, a.body, a.body_sha256,
       u.seq, u.approval_id, u.used_by, u.used_ns,
       ` + extCols + `
FROM ewp_audit.events e
LEFT JOIN ewp_audit.decisions d ON e.tbl = 'decisions' AND d.seq = e.row_seq
LEFT JOIN ewp_audit.approvals a ON e.tbl = 'approvals' AND a.seq = e.row_seq
LEFT JOIN ewp_audit.approval_uses u ON e.tbl = 'approval_uses' AND u.seq = e.row_seq` + extJoins + `
ORDER BY e.seq`
}

// eventRow is one event and the row it names; absent joins scan NULL
// (nil pointers and slices).
type eventRow struct {
	seq, rowSeq  int64
	tbl, payload string
	prev, hash   []byte

	dSeq, dTime                    *int64
	dID, dTool, dProp, dCrd, dAppr []byte
	dKey                           []byte
	dOutcome                       *string
	dBody, dSum                    []byte
	aSeq, aCreated                 *int64
	aID, aDecision, aBody, aSum    []byte
	aVerdict                       *string
	uSeq, uUsed                    *int64
	uAppr, uUsedBy                 []byte
	agSeq, agCreated               *int64
	agName, agCred                 *string
	agBody, agSum                  []byte
	rvSeq, rvRevoked               *int64
	rvName                         *string
	rsSeq, rsTime                  *int64
	rsDecision                     []byte
	rsStatus                       *string
	rsBody, rsSum                  []byte
}

func (v *verifier) walk() (*auditchain.Break, error) {
	rows, err := v.tx.Query(v.ctx, walkSQL(v.ext))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var e eventRow
		if err := e.scan(rows); err != nil {
			return nil, err
		}
		if brk := v.w.Event(e.event()); brk != nil {
			return brk, nil
		}
	}
	return nil, rows.Err()
}

// scan reads a row of walkSQL.
func (e *eventRow) scan(rows pgx.Rows) error {
	return rows.Scan(&e.seq, &e.tbl, &e.rowSeq, &e.payload, &e.prev, &e.hash,
		&e.dSeq, &e.dID, &e.dTime, &e.dTool, &e.dOutcome, &e.dProp, &e.dCrd, &e.dKey, &e.dAppr, &e.dBody, &e.dSum,
		&e.aSeq, &e.aID, &e.aDecision, &e.aVerdict, &e.aCreated, &e.aBody, &e.aSum,
		&e.uSeq, &e.uAppr, &e.uUsedBy, &e.uUsed,
		&e.agSeq, &e.agName, &e.agCred, &e.agCreated, &e.agBody, &e.agSum,
		&e.rvSeq, &e.rvName, &e.rvRevoked,
		&e.rsSeq, &e.rsDecision, &e.rsStatus, &e.rsTime, &e.rsBody, &e.rsSum)
}

func (e *eventRow) event() *auditchain.Event {
	ev := &auditchain.Event{Seq: e.seq, RowSeq: e.rowSeq, Table: e.tbl, Payload: e.payload, Prev: e.prev, Hash: e.hash}
	if e.dSeq != nil {
		r := &auditchain.DecisionRow{Seq: *e.dSeq, DecisionID: string(e.dID), TimeNS: *e.dTime, Tool: string(e.dTool),
			Outcome: *e.dOutcome, PropositionID: string(e.dProp), Credential: string(e.dCrd),
			ApprovalID: string(e.dAppr), Body: e.dBody, BodySum: e.dSum}
		if e.dKey != nil {
			r.IdemKey.String, r.IdemKey.Valid = string(e.dKey), true
		}
		ev.Decision = r
	}
	if e.aSeq != nil {
		ev.Approval = &auditchain.ApprovalRow{Seq: *e.aSeq, ApprovalID: string(e.aID), DecisionID: string(e.aDecision),
			Verdict: *e.aVerdict, CreatedNS: *e.aCreated, Body: e.aBody, BodySum: e.aSum}
	}
	if e.uSeq != nil {
		ev.Use = &auditchain.Use{Seq: *e.uSeq, ApprovalID: string(e.uAppr), UsedBy: string(e.uUsedBy), UsedNS: *e.uUsed}
	}
	switch {
	case e.agSeq != nil:
		ev.Row = &auditchain.AgentRow{Seq: *e.agSeq, Name: *e.agName, CredentialSHA256: *e.agCred, CreatedNS: *e.agCreated, Body: e.agBody, BodySum: e.agSum}
	case e.rvSeq != nil:
		ev.Row = &auditchain.RevocationRow{Seq: *e.rvSeq, Name: *e.rvName, RevokedNS: *e.rvRevoked}
	case e.rsSeq != nil:
		ev.Row = &auditchain.ResultRow{Seq: *e.rsSeq, DecisionID: string(e.rsDecision), Status: *e.rsStatus, TimeNS: *e.rsTime, Body: e.rsBody, BodySum: e.rsSum}
	}
	return ev
}

func (v *verifier) headCheck() (*auditchain.Break, error) { return v.w.HeadCheck(), nil }

// orphans finds rows that no event records (inserted behind the chain).
func (v *verifier) orphans() (*auditchain.Break, error) {
	tables := auditchain.ChainedTables
	if v.ext {
		tables = append(append([]string(nil), tables...), auditchain.AgentTables...)
	}
	return v.w.Orphans(tables, func(t string) (n int64, err error) {
		err = v.tx.QueryRow(v.ctx, `SELECT count(*) FROM ewp_audit.`+t).Scan(&n)
		return n, err
	}, func(t string) (seq int64, err error) {
		err = v.tx.QueryRow(v.ctx, `SELECT min(seq) FROM (SELECT seq FROM ewp_audit.`+t+` EXCEPT SELECT row_seq FROM ewp_audit.events WHERE tbl = $1) x`, t).Scan(&seq)
		return seq, err
	})
}

const triggersSQL = `
SELECT t.tgname, c.relname, t.tgenabled, pg_get_triggerdef(t.oid)
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'ewp_audit' AND NOT t.tgisinternal
ORDER BY t.tgname`

// schema checks the version, the trigger function and that the
// append-only triggers are all there, enabled, unaltered, and alone:
// without them the tables no longer refuse edits, even if none has been
// made yet.
func (v *verifier) schema() (*auditchain.Break, error) {
	var ver string
	if err := v.tx.QueryRow(v.ctx, `SELECT value FROM ewp_audit.audit_meta WHERE key = 'schema_version'`).Scan(&ver); err != nil || ver != strconv.Itoa(SchemaVersion) {
		return &auditchain.Break{Table: "audit_meta", What: fmt.Sprintf("schema_version is %q, want %d (%v)", ver, SchemaVersion, err)}, nil
	}
	var src string
	err := v.tx.QueryRow(v.ctx, `SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure('ewp_audit.refuse_change()')`).Scan(&src)
	if err != nil || src != refuseBody {
		return &auditchain.Break{Table: "ewp_audit.refuse_change", What: "the append-only triggers' function is missing or was altered: the tables may no longer refuse edits"}, nil
	}
	rows, err := v.tx.Query(v.ctx, triggersSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	check := auditchain.NewTriggers(triggers(v.ext))
	for rows.Next() {
		var name, tbl, enabled, def string
		if err := rows.Scan(&name, &tbl, &enabled, &def); err != nil {
			return nil, err
		}
		if brk := check.Found(name, tbl, def); brk != nil {
			return brk, nil
		}
		if enabled != "O" {
			return &auditchain.Break{Table: tbl, What: fmt.Sprintf("trigger %s is disabled (tgenabled %s): the table no longer refuses edits", name, enabled)}, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return check.Missing(), nil
}

// onceKeys checks approval_keys against the chained approvals.
func (v *verifier) onceKeys() (*auditchain.Break, error) {
	if !v.ext {
		return nil, nil
	}
	rows, err := v.tx.Query(v.ctx, `SELECT approval_seq, approval_id, agent, any_agent, tool_name, arguments_hash, until_ns FROM ewp_audit.approval_keys`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []auditchain.OnceKey
	for rows.Next() {
		var k auditchain.OnceKey
		var id, agent, tool, hash []byte
		if err := rows.Scan(&k.ApprovalSeq, &id, &agent, &k.AnyAgent, &tool, &hash, &k.UntilNS); err != nil {
			return nil, err
		}
		k.ApprovalID, k.Agent, k.ToolName, k.ArgumentsHash = string(id), string(agent), string(tool), string(hash)
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return v.w.OnceKeys(keys), nil
}
