package sqlite

import (
	"context"
	"database/sql"

	"github.com/ewp-go/ewp/audit/auditchain"
)

// Schema version 2, as far as Upgrade needs to know it: this version's
// tables without decision_bodies' first_id and last_id, and a decisions
// row for every decision. Its append-only tables are this version's (the
// triggers spelled the same) and so are the names of its indexes on
// decisions.
var (
	v2Tables  = appendOnly
	v2Indexes = []string{"decisions_idem", "decisions_pending", "decisions_approval"}
)

// verifyV2 checks a version 2 log in tx as version 2's Verify did: the
// walk of this version with a row required for every decision and no id
// ranges, the rows behind the chain, the schema version and the
// triggers. The first problem is returned as a *Break; other errors are
// I/O failures.
func verifyV2(ctx context.Context, tx *sql.Tx) (VerifyReport, error) {
	var rep VerifyReport
	v := &verifier{ctx: ctx, tx: tx, w: auditchain.NewWalker(&rep, nil), prev: genesis(), v2: true}
	err := auditchain.RunChecks(&rep, func(err error) error { return err }, v.walk, v.orphans, v.schema)
	return rep, err
}

// v2DecisionsSQL lists the version 2 decisions, set aside, in recording
// order, which verifyV2 found to be their chain order.
const v2DecisionsSQL = `
SELECT event, hash, seq, decision_id, time_ns, outcome, proposition_id, credential, idem_key, approval_id
FROM ` + v2Prefix + `decisions ORDER BY seq`

// copyDecisionsV2 writes the version 2 decisions as this version keeps
// them (copyDecisions), each with its body read through its event from
// the old decision_bodies rows. It returns how many decision_bodies rows
// it wrote.
func copyDecisionsV2(ctx context.Context, tx *sql.Tx) (int64, error) {
	bodies := bodyReader{ctx: ctx, q: tx, table: v2Prefix + tableBodies}
	return copyDecisions(ctx, tx, v2DecisionsSQL, func(rows *sql.Rows, event *int64, hash *[]byte, r *decisionRow) error {
		err := rows.Scan(event, hash, &r.Seq, &r.DecisionID, &r.TimeNS, &r.Outcome, &r.PropositionID, &r.Credential, &r.IdemKey, &r.ApprovalID)
		if err == nil {
			r.Body, err = bodies.body(*event)
		}
		return err
	})
}
