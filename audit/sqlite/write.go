package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ewp-go/ewp/audit"
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
	if err := checkDecision(d); err != nil {
		return err
	}
	if d.ID == "" {
		d.ID = audit.NewID()
	}
	if d.Time.IsZero() {
		d.Time = l.now()
	}
	d.Time = d.Time.UTC()
	body, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("record decision %s: its JSON cannot be written: %w", d.ID, err)
	}
	row := decisionColumns(d, body)
	pre, post := splitPayload(row.payload())
	err = l.wr.submit(ctx, func(t *wtx) error {
		res, err := t.exec(t.st.insDecision, row.DecisionID, row.TimeNS, row.Tool, row.Outcome,
			row.PropositionID, row.Credential, row.IdemKey, row.ApprovalID, row.Body, row.BodySum)
		switch {
		case isUnique(err, "idem_key"):
			return fmt.Errorf("%w: credential %q already recorded a decision under idempotency_key %q; fetch it with ByIdempotencyKey", audit.ErrDuplicateKey, row.Credential, row.IdemKey.String)
		case isUnique(err, "decision_id"):
			return fmt.Errorf("decision %s is already recorded; every call gets a new decision_id", row.DecisionID)
		case err != nil:
			return inDoubt(err)
		}
		seq, err := res.LastInsertId()
		if err != nil {
			return inDoubt(err)
		}
		return t.event(tableDecisions, seq, pre, post)
	})
	return l.writeErr("record decision "+d.ID, err)
}

// checkDecision refuses what no gate call produces.
func checkDecision(d *audit.Decision) error {
	switch {
	case d == nil:
		return errors.New("record decision: nil decision")
	case d.Tool == "":
		return errors.New("record decision: tool is empty (may_act or check_grounding)")
	}
	if knownOutcome(d.Outcome) {
		return nil
	}
	return fmt.Errorf("record decision: outcome %q is not one of MAY_ACT, REQUIRE_CONFIRMATION, DENY, REFUSED, ANSWERED", d.Outcome)
}

// Approve stores an operator's approval or rejection of a decision. It
// fills a.ID and a.CreatedAt when empty and always sets a.Action to the
// answered decision's action. Inside the write transaction it checks
// (audit.Approval.Validate) that the decision exists (audit.ErrNotFound),
// awaits confirmation (audit.ErrNotPending) and is not answered yet
// (audit.ErrAnswered), and that the approval is well formed
// (audit.ErrInvalidApproval); so two operators answering at once cannot
// both succeed.
func (l *Log) Approve(ctx context.Context, a *audit.Approval) error {
	if l.ro {
		return l.errReadOnly()
	}
	if a.ID == "" {
		a.ID = audit.NewID()
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = l.now()
	}
	a.CreatedAt = a.CreatedAt.UTC()
	if !a.Until.IsZero() {
		a.Until = a.Until.UTC()
	}
	err := l.wr.submit(ctx, func(t *wtx) error {
		answered, err := t.decision(a.DecisionID)
		if err != nil {
			return err
		}
		var prior string
		err = t.tx.QueryRow(`SELECT approval_id FROM approvals WHERE decision_id = ?`, asJSON(a.DecisionID)).Scan(&prior)
		if err == nil {
			return fmt.Errorf("%w: decision %s was answered by %s; show it with `ewp-audit show %s`", audit.ErrAnswered, a.DecisionID, prior, prior)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return inDoubt(err)
		}
		a.Action = new(answered.Action())
		if err := a.Validate(answered, l.now()); err != nil {
			return err
		}
		body, err := json.Marshal(a)
		if err != nil {
			return err
		}
		row := approvalColumns(a, body)
		res, err := t.exec(t.st.insApproval, row.ApprovalID, row.DecisionID, row.Verdict, row.CreatedNS, row.Body, row.BodySum)
		if err != nil {
			return inDoubt(err)
		}
		seq, err := res.LastInsertId()
		if err != nil {
			return inDoubt(err)
		}
		pre, post := splitPayload(row.payload())
		return t.event(tableApprovals, seq, pre, post)
	})
	return l.writeErr("approve decision "+a.DecisionID, err)
}

// Consume marks the single-use approval approvalID used by decision usedBy
// (which the server records right after, under that id). Of concurrent
// calls, in this process or another, exactly one succeeds; the others get
// audit.ErrApprovalUsed naming the decision that used it. It refuses an
// unknown approval (audit.ErrNotFound), a rejection
// (audit.ErrApprovalRejected), an expired one (audit.ErrApprovalExpired,
// by this log's clock) and a scope approval, which is not single-use
// (audit.ErrInvalidApproval).
func (l *Log) Consume(ctx context.Context, approvalID, usedBy string) error {
	if l.ro {
		return l.errReadOnly()
	}
	now := l.now()
	err := l.wr.submit(ctx, func(t *wtx) error {
		a, err := t.approval(approvalID)
		if err != nil {
			return err
		}
		if err := consumable(a, now); err != nil {
			return err
		}
		u := Use{ApprovalID: asJSON(approvalID), UsedBy: usedBy, UsedNS: now.UnixNano()}
		res, err := t.exec(t.st.insUse, u.ApprovalID, u.UsedBy, u.UsedNS)
		if isUnique(err, "approval_id") {
			var by string
			if err := t.tx.QueryRow(`SELECT used_by FROM approval_uses WHERE approval_id = ?`, u.ApprovalID).Scan(&by); err != nil {
				return inDoubt(err)
			}
			return &audit.CoverageError{ApprovalID: approvalID, Reason: audit.ErrApprovalUsed,
				Detail: fmt.Sprintf("a once approval was already used by decision %s; ask for a new confirmation", by)}
		}
		if err != nil {
			return inDoubt(err)
		}
		seq, err := res.LastInsertId()
		if err != nil {
			return inDoubt(err)
		}
		pre, post := splitPayload(u.payload())
		return t.event(tableUses, seq, pre, post)
	})
	return l.writeErr("consume approval "+approvalID, err)
}

func consumable(a *audit.Approval, now time.Time) error {
	switch {
	case a.Verdict != audit.Approved:
		return &audit.CoverageError{ApprovalID: a.ID, Reason: audit.ErrApprovalRejected, Detail: "a rejection cannot be used"}
	case !a.Once:
		return fmt.Errorf("%w: approval %s is a scope approval, usable until %s; only once approvals are consumed", audit.ErrInvalidApproval, a.ID, a.Until.Format(time.RFC3339))
	case !a.Until.IsZero() && !now.Before(a.Until):
		return &audit.CoverageError{ApprovalID: a.ID, Reason: audit.ErrApprovalExpired,
			Detail: fmt.Sprintf("expired at %s (server time %s)", a.Until.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))}
	}
	return nil
}

// writeErr leaves the log's own refusals (audit.Err*, coverage) as they
// are and names the file on storage failures.
func (l *Log) writeErr(op string, err error) error {
	if err == nil || isRefusalErr(err) {
		return err
	}
	return l.storeErr(op, err)
}

func isRefusalErr(err error) bool {
	var ce *audit.CoverageError
	for _, e := range []error{audit.ErrNotFound, audit.ErrDuplicateKey, audit.ErrInvalidApproval, audit.ErrNotPending, audit.ErrAnswered} {
		if errors.Is(err, e) {
			return true
		}
	}
	return errors.As(err, &ce)
}

func (t *wtx) decision(id string) (*audit.Decision, error) {
	var body []byte
	err := t.tx.QueryRow(`SELECT body FROM decisions WHERE decision_id = ?`, asJSON(id)).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: no decision %s in this log; list pending ones with `ewp-audit list --pending`", audit.ErrNotFound, id)
	}
	if err != nil {
		return nil, inDoubt(err)
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
		return nil, inDoubt(err)
	}
	return decodeApproval(body)
}

func decodeDecision(body []byte) (*audit.Decision, error) {
	d := new(audit.Decision)
	if err := json.Unmarshal(body, d); err != nil {
		return nil, fmt.Errorf("stored decision does not decode: %w", err)
	}
	return d, nil
}

func decodeApproval(body []byte) (*audit.Approval, error) {
	a := new(audit.Approval)
	if err := json.Unmarshal(body, a); err != nil {
		return nil, fmt.Errorf("stored approval does not decode: %w", err)
	}
	return a, nil
}

func knownOutcome(o string) bool {
	switch o {
	case audit.OutcomeMayAct, audit.OutcomeRequireConfirmation, audit.OutcomeDeny, audit.OutcomeRefused, audit.OutcomeAnswered:
		return true
	}
	return false
}
