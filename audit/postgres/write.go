package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

// b is s as a bytea parameter (” rather than NULL when empty).
func b(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(s)
}

// nextSeq is a chained table's next row seq: its greatest plus one, so
// seqs have no gaps whatever was refused or rolled back (the writer holds
// the chain lock; see inTx).
func nextSeq(table string) string {
	return `(SELECT coalesce(max(seq), 0) + 1 FROM ewp_audit.` + table + `)`
}

var insDecision = `INSERT INTO ewp_audit.decisions (seq, decision_id, time_ns, tool, outcome, proposition_id, credential, idem_key, approval_id, body, body_sha256)
VALUES (` + nextSeq(auditchain.TableDecisions) + `, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING RETURNING seq`

// Record stores a decision and its chain entry, and returns once they are
// committed: an answer carrying d.ID may then be sent. It fills d.ID and
// d.Time when empty and stores the time in UTC. Concurrent Records share
// commits, in this process; Records of other processes take turns with
// them on the chain lock.
//
// A decision with an IdempotencyKey that its caller's credential already
// used, in any process, is refused with audit.ErrDuplicateKey.
func (l *Log) Record(ctx context.Context, d *audit.Decision) error {
	if l.ro {
		return l.errReadOnly()
	}
	r, err := auditchain.PrepareRecord(d, l.now, audit.NewID)
	if err != nil {
		return err
	}
	return l.writeErr("record decision ", d.ID, l.wr.submit(ctx, &op{rec: &r}))
}

// queueRecord adds a Record's INSERT to the pipeline; ON CONFLICT DO
// NOTHING makes a taken decision_id or idempotency key a missing row, not
// an error that would abort the transaction and the batch with it.
func queueRecord(pb *pgx.Batch, r *auditchain.DecisionRow) {
	pb.Queue(insDecision, recordArgs(r)...)
}

// recordArgs are insDecision's arguments for r.
func recordArgs(r *auditchain.DecisionRow) []any {
	var key []byte
	if r.IdemKey.Valid {
		key = b(r.IdemKey.String)
	}
	return []any{b(r.DecisionID), r.TimeNS, b(r.Tool), r.Outcome, b(r.PropositionID),
		b(r.Credential), key, b(r.ApprovalID), r.Body, r.BodySum}
}

// conflict names why a decision was not inserted: its idempotency key or
// its decision_id is taken.
func (t *wtx) conflict(r *auditchain.DecisionRow) error {
	if r.IdemKey.Valid {
		var taken bool
		err := t.tx.QueryRow(t.ctx, `SELECT EXISTS (SELECT 1 FROM ewp_audit.decisions WHERE credential = $1 AND idem_key = $2)`,
			b(r.Credential), b(r.IdemKey.String)).Scan(&taken)
		if err != nil {
			return auditchain.InDoubt(err)
		}
		if taken {
			return fmt.Errorf("%w: credential %q already recorded a decision under idempotency_key %q; fetch it with ByIdempotencyKey", audit.ErrDuplicateKey, r.Credential, r.IdemKey.String)
		}
	}
	return fmt.Errorf("decision %s is already recorded; every call gets a new decision_id", r.DecisionID)
}

// Approve stores an operator's approval or rejection of a decision, with
// the checks of the SQLite log (audit.Approval.Validate inside the write
// transaction, holding the chain lock): two operators answering at once,
// through any processes, cannot both succeed.
func (l *Log) Approve(ctx context.Context, a *audit.Approval) error {
	if l.ro {
		return l.errReadOnly()
	}
	err := l.wr.submit(ctx, &op{run: func(t *wtx) error { return t.approve(a, l.now()) }})
	return l.writeErr("approve decision ", a.DecisionID, err)
}

func (t *wtx) approve(a *audit.Approval, now time.Time) error {
	answered, err := t.decision(a.DecisionID)
	if err != nil {
		return err
	}
	var prior []byte
	err = t.tx.QueryRow(t.ctx, `SELECT approval_id FROM ewp_audit.approvals WHERE decision_id = $1`, b(auditchain.AsJSON(a.DecisionID))).Scan(&prior)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return auditchain.InDoubt(err)
	}
	if err := a.Admit(answered, string(prior), now); err != nil {
		return err
	}
	body, err := json.Marshal(a)
	if err != nil {
		return err
	}
	row := auditchain.ApprovalColumns(a, body)
	var seq int64
	err = t.tx.QueryRow(t.ctx, `INSERT INTO ewp_audit.approvals (seq, approval_id, decision_id, verdict, created_ns, body, body_sha256)
		VALUES (`+nextSeq(auditchain.TableApprovals)+`, $1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING seq`,
		b(row.ApprovalID), b(row.DecisionID), row.Verdict, row.CreatedNS, row.Body, row.BodySum).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: approval %s is already recorded; every approval gets a new approval_id", audit.ErrInvalidApproval, a.ID)
	}
	if err != nil {
		return auditchain.InDoubt(err)
	}
	pre, post := auditchain.SplitPayload(row.Payload())
	t.event(auditchain.TableApprovals, seq, pre, post)
	return t.writeOnceKey(a, seq)
}

// RecordUse records d, a MAY_ACT decision the single-use approval
// d.ApprovalID lifted, and the approval's use by d, in one transaction
// (audit.Log.RecordUse): the decision's entry, then the use's. Of
// concurrent calls, in this process or any other on the same database
// (every ewp-mcp replica), exactly one succeeds: the others find the use
// holding the chain lock and get audit.ErrApprovalUsed naming the
// decision that used it, having written nothing. It refuses as the
// SQLite log does (what Record refuses, audit.ErrNotFound, a rejection,
// an expired or a scope approval).
func (l *Log) RecordUse(ctx context.Context, d *audit.Decision) error {
	if l.ro {
		return l.errReadOnly()
	}
	if err := auditchain.CheckUse(d); err != nil {
		return err
	}
	r, err := auditchain.PrepareRecord(d, l.now, audit.NewID)
	if err != nil {
		return err
	}
	return l.writeErr("record decision ", d.ID, l.wr.submit(ctx, &op{rec: &r, use: true, now: l.now()}))
}

// recordUse writes o's decision and its approval's use; refused as a
// whole, having written nothing, when the use is (asked first) or the
// decision is (its id or key taken).
func (t *wtx) recordUse(o *op) error {
	r := o.rec
	u, err := t.approvalUse(r.Row.ApprovalID, r.Row.DecisionID, o.now)
	if err != nil {
		return err
	}
	var seq int64
	err = t.tx.QueryRow(t.ctx, insDecision, recordArgs(&r.Row)...).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return t.conflict(&r.Row)
	}
	if err != nil {
		return auditchain.InDoubt(err)
	}
	t.event(auditchain.TableDecisions, seq, r.Pre, r.Post)
	err = t.tx.QueryRow(t.ctx, `INSERT INTO ewp_audit.approval_uses (seq, approval_id, used_by, used_ns)
		VALUES (`+nextSeq(auditchain.TableUses)+`, $1, $2, $3) RETURNING seq`,
		b(u.ApprovalID), b(u.UsedBy), u.UsedNS).Scan(&seq)
	if err != nil {
		return auditchain.InDoubt(err)
	}
	pre, post := auditchain.SplitPayload(u.Payload())
	t.event(auditchain.TableUses, seq, pre, post)
	return nil
}

// approvalUse is the use of approval approvalID by decision usedBy at
// now, when the approval can be used: it is on record, unused, and
// audit.Approval.Consumable at now.
func (t *wtx) approvalUse(approvalID, usedBy string, now time.Time) (*auditchain.Use, error) {
	a, err := t.approval(approvalID)
	if err != nil {
		return nil, err
	}
	if err := a.Consumable(now); err != nil {
		return nil, err
	}
	var by []byte
	err = t.tx.QueryRow(t.ctx, `SELECT used_by FROM ewp_audit.approval_uses WHERE approval_id = $1`, b(auditchain.AsJSON(approvalID))).Scan(&by)
	switch {
	case err == nil:
		return nil, auditchain.Used(approvalID, string(by))
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, auditchain.InDoubt(err)
	}
	u := &auditchain.Use{ApprovalID: auditchain.AsJSON(approvalID), UsedBy: usedBy, UsedNS: now.UnixNano()}
	// A use the chain records counts even when its row was deleted
	// behind the chain.
	if err := t.useOnChain(u.ApprovalID); err != nil {
		return nil, err
	}
	return u, nil
}

// writeErr leaves the log's own refusals as they are and names the
// database on storage failures.
func (l *Log) writeErr(op, id string, err error) error {
	if err == nil || auditchain.IsRefusal(err) {
		return err
	}
	return l.storeErr(op+id, err)
}

func (t *wtx) decision(id string) (*audit.Decision, error) {
	var body []byte
	err := t.tx.QueryRow(t.ctx, `SELECT body FROM ewp_audit.decisions WHERE decision_id = $1`, b(auditchain.AsJSON(id))).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: no decision %s in this log; list pending ones with `ewp-audit list --pending`", audit.ErrNotFound, id)
	}
	if err != nil {
		return nil, auditchain.InDoubt(err)
	}
	return auditchain.DecodeDecision(body)
}

func (t *wtx) approval(id string) (*audit.Approval, error) {
	var body []byte
	err := t.tx.QueryRow(t.ctx, `SELECT body FROM ewp_audit.approvals WHERE approval_id = $1`, b(auditchain.AsJSON(id))).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: no approval %s in this log", audit.ErrNotFound, id)
	}
	if err != nil {
		return nil, auditchain.InDoubt(err)
	}
	return auditchain.DecodeApproval(body)
}

// useOnChain refuses to consume an approval whose use an event already
// records while its use row is gone (deleted behind the chain, which only
// the owner can): the events of uses are found through events_rows.
func (t *wtx) useOnChain(approvalID string) error {
	var seq int64
	err := t.tx.QueryRow(t.ctx, `SELECT e.seq FROM ewp_audit.events e WHERE e.tbl = 'approval_uses' AND strpos(e.payload, $1) = 1
		AND NOT EXISTS (SELECT 1 FROM ewp_audit.approval_uses u WHERE u.seq = e.row_seq) LIMIT 1`, auditchain.UsePrefix(approvalID)).Scan(&seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return auditchain.InDoubt(err)
	}
	return auditchain.UseGone(approvalID, seq)
}
