package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

// Record stores a decision and its chain entry, and returns once they are
// committed: an answer carrying d.ID may then be sent. It fills d.ID (a
// time-ordered UUID) and d.Time (this log's clock) when they are empty and
// stores the time in UTC. Concurrent Records share commits (see writer).
//
// A decision with an IdempotencyKey that its caller's credential already
// used is refused with audit.ErrDuplicateKey; the server looks the key up
// first (ByIdempotencyKey) and, when it loses a race, fetches the winner.
func (l *Log) Record(ctx context.Context, d *audit.Decision) error {
	if l.ro {
		return l.errReadOnly()
	}
	buf := recordBuffers.Get().(*auditchain.Buffers)
	defer recordBuffers.Put(buf) // the writer has copied them once submit returns
	r, err := auditchain.PrepareRecordIn(d, l.now, audit.NewID, buf)
	if err != nil {
		return err
	}
	err = l.wr.submit(ctx, op{rec: &r})
	return l.writeErr("record decision ", d.ID, err)
}

// recordBuffers are the Records' body and payload buffers, used again
// once their commit returns (the writer copies both).
var recordBuffers = sync.Pool{New: func() any { return &auditchain.Buffers{Body: make([]byte, 0, 2048), Payload: make([]byte, 0, 512)} }}

// Approve stores an operator's approval or rejection of a decision.
// Inside the write transaction it looks up the decision
// (audit.ErrNotFound) and any earlier answer, and applies
// audit.Approval.Admit, which fills a.ID, a.CreatedAt and a.Action and
// refuses a decision already answered (audit.ErrAnswered), not awaiting
// confirmation (audit.ErrNotPending) or a malformed approval
// (audit.ErrInvalidApproval); so two operators answering at once cannot
// both succeed.
func (l *Log) Approve(ctx context.Context, a *audit.Approval) error {
	if l.ro {
		return l.errReadOnly()
	}
	err := l.wr.submit(ctx, op{fn: func(t *wtx) error {
		answered, err := t.decision(a.DecisionID)
		if err != nil {
			return err
		}
		var prior string
		err = t.tx.QueryRow(`SELECT approval_id FROM approvals WHERE decision_id = ?`, asJSON(a.DecisionID)).Scan(&prior)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return auditchain.InDoubt(err)
		}
		if err := a.Admit(answered, prior, l.now()); err != nil {
			return err
		}
		if err := t.approvalIDFree(a.ID); err != nil {
			return err
		}
		body, err := json.Marshal(a)
		if err != nil {
			return err
		}
		row := approvalColumns(a, body)
		res, err := t.exec(t.st.insApproval, row.ApprovalID, row.DecisionID, row.Verdict, row.CreatedNS, row.Body, row.BodySum)
		if err != nil {
			return auditchain.InDoubt(err)
		}
		seq, err := res.LastInsertId()
		if err != nil {
			return auditchain.InDoubt(err)
		}
		pre, post := splitPayload(row.Payload())
		if err := t.event(tableApprovals, seq, pre, post); err != nil {
			return err
		}
		return t.writeOnceKey(a, seq)
	}})
	return l.writeErr("approve decision ", a.DecisionID, err)
}

// RecordUse records d, a MAY_ACT decision the single-use approval
// d.ApprovalID lifted, and the approval's use by d, in one transaction
// (audit.Log.RecordUse): the decision's entry, then the use's. Of
// concurrent calls, in this process or another, exactly one succeeds; the
// others get audit.ErrApprovalUsed naming the decision that used it, and
// nothing of theirs is written. It refuses what Record refuses, an
// unknown approval (audit.ErrNotFound), a rejection, an expired one (by
// this log's clock) and a scope approval (audit.Approval.Consumable).
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
	err = l.wr.submit(ctx, op{rec: &r, use: true, now: l.now()})
	return l.writeErr("record decision ", d.ID, err)
}

// recordUse writes op i, a decision and its approval's use, as a run of
// its own: it is refused alone, having written nothing, when the use is
// (approvalUse, asked first) or the decision is (its id or key taken).
func (t *wtx) recordUse(ops []op, errs []error, i int) error {
	row := &ops[i].rec.Row
	u, err := t.approvalUse(row.ApprovalID, row.DecisionID, ops[i].now)
	if err != nil {
		return err
	}
	t.pend = append(t.pend[:0], i)
	defer func() { t.pend = t.pend[:0] }()
	if err := t.refuseTaken(ops, errs); err != nil {
		return err
	}
	if len(t.pend) == 0 {
		return errs[i]
	}
	if err := t.insertDecisions(ops); err != nil {
		return err
	}
	res, err := t.exec(t.st.insUse, u.ApprovalID, u.UsedBy, u.UsedNS)
	if err != nil {
		return auditchain.InDoubt(err)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return auditchain.InDoubt(err)
	}
	pre, post := splitPayload(u.Payload())
	return t.event(tableUses, seq, pre, post)
}

// approvalUse is the use of approval approvalID by decision usedBy at
// now, when the approval can be used: it is on record, unused, and
// audit.Approval.Consumable at now.
func (t *wtx) approvalUse(approvalID, usedBy string, now time.Time) (*Use, error) {
	a, err := t.approval(approvalID)
	if err != nil {
		return nil, err
	}
	if err := a.Consumable(now); err != nil {
		return nil, err
	}
	var by string
	err = t.tx.QueryRow(`SELECT used_by FROM approval_uses WHERE approval_id = ?`, asJSON(approvalID)).Scan(&by)
	switch {
	case err == nil:
		return nil, auditchain.Used(approvalID, by)
	case !errors.Is(err, sql.ErrNoRows):
		return nil, auditchain.InDoubt(err)
	}
	u := &Use{ApprovalID: asJSON(approvalID), UsedBy: usedBy, UsedNS: now.UnixNano()}
	// A use the chain records counts even when its row was deleted
	// behind the chain.
	if err := t.useOnChain(u.ApprovalID); err != nil {
		return nil, err
	}
	return u, nil
}

// writeErr leaves the log's own refusals (audit.Err*, coverage) as they
// are and names the file on storage failures. The operation's name is
// op+id, joined only on failure: Record is the hot path.
func (l *Log) writeErr(op, id string, err error) error {
	if err == nil || isRefusalErr(err) {
		return err
	}
	return l.storeErr(op+id, err)
}

func (t *wtx) decision(id string) (*audit.Decision, error) {
	body, err := decisionBody(context.Background(), t.tx, asJSON(id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: no decision %s in this log; list pending ones with `ewp-audit list --pending`", audit.ErrNotFound, id)
	}
	if err != nil {
		return nil, auditchain.InDoubt(err)
	}
	return decodeDecision(body)
}

func (t *wtx) approval(id string) (*audit.Approval, error) {
	var body []byte
	err := t.tx.QueryRow(`SELECT body FROM approvals WHERE approval_id = ?`, asJSON(id)).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: no approval %s in this log", audit.ErrNotFound, id)
	}
	if err != nil {
		return nil, auditchain.InDoubt(err)
	}
	return decodeApproval(body)
}

// useOnChain refuses to consume an approval whose use an event already
// records while its use row is gone (the row's UNIQUE key would not stop
// a second use then). Events hold only approvals and uses, so the scan is
// short, and only a consume pays it.
func (t *wtx) useOnChain(approvalID string) error {
	var seq int64
	err := t.tx.QueryRow(`SELECT e.seq FROM events e WHERE e.tbl = 'approval_uses' AND instr(e.payload, ?) = 1
		AND NOT EXISTS (SELECT 1 FROM approval_uses u WHERE u.seq = e.row_seq) LIMIT 1`, auditchain.UsePrefix(approvalID)).Scan(&seq)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return auditchain.InDoubt(err)
	}
	return auditchain.UseGone(approvalID, seq)
}

// approvalIDFree refuses an approval_id already on record, as a refusal
// of that approval alone (the PostgreSQL log's answer too), not a failed
// insert that would fail its whole batch.
func (t *wtx) approvalIDFree(id string) error {
	var n int
	if err := t.tx.QueryRow(`SELECT count(*) FROM approvals WHERE approval_id = ?`, asJSON(id)).Scan(&n); err != nil {
		return auditchain.InDoubt(err)
	}
	if n > 0 {
		return fmt.Errorf("%w: approval %s is already recorded; every approval gets a new approval_id", audit.ErrInvalidApproval, id)
	}
	return nil
}
