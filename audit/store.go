package audit

import (
	"fmt"
	"strings"
	"time"
)

// Admit is the one rule every Log applies when it stores approval a,
// inside the transaction that stores it, so the stores cannot drift:
// answered is the decision a answers (the store's lookup; ErrNotFound when
// there is none), prior the approval_id already answering it ("" when
// none) and now the store's clock. It refuses a decision already answered
// (ErrAnswered: a decision is answered once, so two operators answering at
// once cannot both succeed), fills an empty ID (a UUIDv7) and CreatedAt
// (now), stores times in UTC, and checks the approval (Validate:
// ErrNotPending, ErrInvalidApproval). a.Action is what the operator saw,
// and what Covers compares with: a signed approval carries it (Signer.Sign
// filled it, and the signature covers it), so Admit checks that it is the
// answered decision's action and refuses it otherwise, never rewriting
// what was signed; an unsigned approval (which the gate honours for
// nothing) gets the answered action copied in. So with the agent: an
// unsigned approval is bound to the answered decision's Agent unless
// AnyAgent; a signed one carries the binding Signer.Sign gave it, and
// Validate refuses one bound to another agent than the answered
// decision's (ErrApprovalWrongAgent).
func (a *Approval) Admit(answered *Decision, prior string, now time.Time) error {
	if prior != "" {
		return fmt.Errorf("%w: decision %s was answered by %s; show it with `ewp-audit show %s`", ErrAnswered, answered.ID, prior, prior)
	}
	a.fillIdentity(now)
	if a.Signature == "" && !a.AnyAgent && a.Agent == "" {
		a.Agent = answered.Agent // bound to the answered decision's agent
	}
	if a.Action == nil {
		a.Action = new(answered.Action())
	} else if diff := a.Action.Differs(answered.Action()); len(diff) > 0 {
		return fmt.Errorf("%w: the approval's action differs from decision %s's in %s: an approval answers the action the operator was shown", ErrInvalidApproval, answered.ID, strings.Join(diff, ", "))
	}
	return a.Validate(answered, now)
}

// fillIdentity gives an approval its id and creation time (now) where it
// has none, and keeps its times in UTC, as they are stored and signed.
func (a *Approval) fillIdentity(now time.Time) {
	if a.ID == "" {
		a.ID = NewID()
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = now
	}
	a.CreatedAt = a.CreatedAt.UTC()
	if !a.Until.IsZero() {
		a.Until = a.Until.UTC()
	}
}

// Consumable is the rule every Log applies before it records a
// single-use approval's use (RecordUse), at the store's clock now: a
// rejection cannot
// be used (ErrApprovalRejected), nor an expired approval
// (ErrApprovalExpired), both as a *CoverageError; a scope approval is not
// single-use (ErrInvalidApproval). Whether it was used already is the
// store's atomic part.
func (a *Approval) Consumable(now time.Time) error {
	switch {
	case a.Verdict != Approved:
		return &CoverageError{ApprovalID: a.ID, Reason: ErrApprovalRejected, Detail: "a rejection cannot be used"}
	case !a.Once:
		return fmt.Errorf("%w: approval %s is a scope approval, usable until %s; only once approvals are consumed",
			ErrInvalidApproval, a.ID, a.Until.UTC().Format(time.RFC3339))
	case !a.Until.IsZero() && !now.Before(a.Until):
		return &CoverageError{ApprovalID: a.ID, Reason: ErrApprovalExpired,
			Detail: fmt.Sprintf("expired at %s (server time %s)", a.Until.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))}
	}
	return nil
}
