package mcp

import (
	"context"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// The status decision_get tells of a REQUIRE_CONFIRMATION decision, so an
// agent whose call is pending can wait for the operator's answer.
const (
	// StatusPending: no answer yet.
	StatusPending = "pending"
	// StatusApproved: an operator approved it and the approval is still
	// honoured; present approval_id with the same call.
	StatusApproved = "approved"
	// StatusRejected: an operator rejected it; do not act.
	StatusRejected = "rejected"
	// StatusExpired: it was approved, but the approval's until (or the
	// server's --approval-max-lifetime) has passed; ask again.
	StatusExpired = "expired"
	// StatusUnverified: an answer is on record but no operator key this
	// server trusts signed it (or the chain does not vouch for it); the
	// gate refuses it, and the decision cannot be answered again.
	StatusUnverified = "unverified"
)

// confirmationStatus is d's status and, when approved, the approval_id to
// present; "" for a decision that did not ask for confirmation. A
// decision is answered at most once (audit.ErrAnswered), so the last
// answer is the answer. A once approval already used still reads
// approved: presenting it again is refused APPROVAL_USED.
func (s *Server) confirmationStatus(ctx context.Context, d *audit.Decision, answers []audit.Approval) (status, approvalID string) {
	if d.Outcome != audit.OutcomeRequireConfirmation {
		return "", ""
	}
	if len(answers) == 0 {
		return StatusPending, ""
	}
	ap := answers[len(answers)-1]
	// Verified as the gate reads it: the stored approval, through the chain.
	stored, err := s.decisions.Log.Approval(ctx, ap.ID)
	if err == nil {
		_, err = s.decisions.OperatorKeys.Verify(stored)
	}
	switch {
	case err != nil:
		return StatusUnverified, ""
	case stored.Verdict == audit.Rejected:
		return StatusRejected, ""
	case expired(stored.Capped(s.decisions.MaxApprovalLifetime), s.now()):
		return StatusExpired, ""
	}
	return StatusApproved, stored.ID
}

func expired(ap *audit.Approval, now time.Time) bool {
	return !ap.Until.IsZero() && !now.Before(ap.Until)
}
