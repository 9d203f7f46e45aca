package sqlite

import (
	"context"
	"database/sql"

	"github.com/ewp-go/ewp/audit/auditchain"
)

// Schema version 1, as far as Upgrade needs to know it: a wide decisions
// row (its body and body_sha256 included) and an events row for every
// row of decisions, approvals and approval_uses, with the same payloads
// and link hash as versions 2 and 3. These are its append-only tables
// (their triggers are spelled as this version's) and the indexes on
// decisions whose names this version reuses.
var (
	v1Tables  = []string{"audit_meta", tableDecisions, tableApprovals, tableUses, "events"}
	v1Indexes = []string{"decisions_idem", "decisions_time", "decisions_pending", "decisions_approval"}
)

// v1WalkSQL is version 1's walk: every event, with the row it names.
const v1WalkSQL = `
SELECT e.seq, e.tbl, e.row_seq, e.payload, e.prev_hash, e.hash,
       a.seq, a.approval_id, a.decision_id, a.verdict, a.created_ns, a.body, a.body_sha256,
       u.seq, u.approval_id, u.used_by, u.used_ns,
       d.seq, d.decision_id, d.time_ns, d.tool, d.outcome, d.proposition_id, d.credential, d.idem_key, d.approval_id, d.body, d.body_sha256
FROM events e
LEFT JOIN approvals a ON e.tbl = 'approvals' AND a.seq = e.row_seq
LEFT JOIN approval_uses u ON e.tbl = 'approval_uses' AND u.seq = e.row_seq
LEFT JOIN decisions d ON e.tbl = 'decisions' AND d.seq = e.row_seq
ORDER BY e.seq`

// v1EventRow is a version 1 event and the row it names: an eventRow, or
// a decisions row (NULLs when absent).
type v1EventRow struct {
	eventRow
	dSeq, dTime                       sql.NullInt64
	dID, dTool, dOutcome, dProp, dCrd sql.NullString
	dKey, dAppr                       sql.NullString
	dBody, dSum                       []byte
}

// verifyV1 checks a version 1 log in tx as version 1's Verify did: every
// event's link and hash, every row against its event's payload, every
// body against its body_sha256 and the columns derived from it, no row
// behind the chain, every trigger in place. The first problem is
// returned as a *Break; other errors are I/O failures.
func verifyV1(ctx context.Context, tx *sql.Tx) (VerifyReport, error) {
	var rep VerifyReport
	v := &verifier{ctx: ctx, tx: tx, w: auditchain.NewWalker(&rep, nil)}
	err := auditchain.RunChecks(&rep, func(err error) error { return err }, v.walkV1, v.eventOrphans,
		func() (*Break, error) { return v.triggers(triggersOn(v1Tables)) })
	return rep, err
}

func (v *verifier) walkV1() (*Break, error) {
	rows, err := v.tx.QueryContext(v.ctx, v1WalkSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var e v1EventRow
		if err := rows.Scan(&e.seq, &e.tbl, &e.rowSeq, &e.payload, &e.prev, &e.hash,
			&e.aSeq, &e.aID, &e.aDecision, &e.aVerdct, &e.aCreated, &e.aBody, &e.aSum,
			&e.uSeq, &e.uAppr, &e.uUsedBy, &e.uUsed,
			&e.dSeq, &e.dID, &e.dTime, &e.dTool, &e.dOutcome, &e.dProp, &e.dCrd, &e.dKey, &e.dAppr, &e.dBody, &e.dSum); err != nil {
			return nil, err
		}
		ev := e.chainEvent()
		if e.dSeq.Valid {
			ev.Decision = &decisionRow{Seq: e.dSeq.Int64, DecisionID: e.dID.String, TimeNS: e.dTime.Int64, Tool: e.dTool.String,
				Outcome: e.dOutcome.String, PropositionID: e.dProp.String, Credential: e.dCrd.String, IdemKey: e.dKey,
				ApprovalID: e.dAppr.String, Body: e.dBody, BodySum: e.dSum}
		}
		if brk := v.w.Event(ev); brk != nil {
			return brk, nil
		}
	}
	return nil, rows.Err()
}
