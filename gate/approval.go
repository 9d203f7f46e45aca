package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// ApprovalLayerName is the layer an approval adds to the gate's answer.
const ApprovalLayerName = "approval"

// Reasons of the approval layer. Each reason string starts with its name
// and a colon, then says what happened and what to do.
const (
	ReasonApproved            = "APPROVED"
	ReasonApprovalNotNeeded   = "APPROVAL_NOT_NEEDED"
	ReasonApprovalCannotLift  = "APPROVAL_CANNOT_LIFT_DENY"
	ReasonApprovalRejected    = "APPROVAL_REJECTED"
	ReasonApprovalExpired     = "APPROVAL_EXPIRED"
	ReasonApprovalUsed        = "APPROVAL_USED"
	ReasonApprovalOutOfScope  = "APPROVAL_OUT_OF_SCOPE"
	ReasonApprovalWrongAction = "APPROVAL_WRONG_ACTION"
	// ReasonApprovalWrongAgent: the approval is bound to another agent
	// than the one presenting it (unless the operator widened it).
	ReasonApprovalWrongAgent = "APPROVAL_WRONG_AGENT"
	// ReasonApprovalWrongProposition: the approval (once, or its scope)
	// is for another proposition than the call's.
	ReasonApprovalWrongProposition = "APPROVAL_WRONG_PROPOSITION"
	ReasonApprovalUnknown          = "APPROVAL_UNKNOWN"
	ReasonApprovalsDisabled        = "APPROVALS_DISABLED"
	// ReasonApprovalUnsigned: the approval carries no operator signature.
	ReasonApprovalUnsigned = "APPROVAL_UNSIGNED"
	// ReasonApprovalBadSignature: the signature does not verify over the
	// approval as stored, or its approver is not the signing key's name.
	ReasonApprovalBadSignature = "APPROVAL_BAD_SIGNATURE"
	// ReasonApprovalUnknownKey: signed by a key this server does not trust.
	ReasonApprovalUnknownKey = "APPROVAL_UNKNOWN_KEY"
	// ReasonNoOperatorKeys: the server has no operator keys to verify with.
	ReasonNoOperatorKeys = "APPROVAL_NO_OPERATOR_KEYS"
	// ReasonApprovalNotOnChain: the stored approval is not what the log's
	// chain recorded (inserted behind it, or edited).
	ReasonApprovalNotOnChain = "APPROVAL_NOT_ON_CHAIN"
)

// refusedApprovals maps why package audit says an approval does not let a
// call go ahead (audit.Approval.Covers, Log.RecordUse) to the approval
// layer's reason and what the agent should do next. The rule itself lives
// in package audit only.
var refusedApprovals = []struct {
	err    error
	reason string
	next   string
}{
	{audit.ErrApprovalRejected, ReasonApprovalRejected, "do not act; tell the user"},
	{audit.ErrApprovalExpired, ReasonApprovalExpired, "ask the user, and the operator for a new approval"},
	{audit.ErrApprovalUsed, ReasonApprovalUsed, "ask the user, and the operator for a new approval"},
	{audit.ErrApprovalWrongProposition, ReasonApprovalWrongProposition, "present it only for the proposition it was given for"},
	{audit.ErrApprovalWrongAction, ReasonApprovalWrongAction, "ask the user, and the operator for an approval of this action"},
	{audit.ErrApprovalWrongAgent, ReasonApprovalWrongAgent, "an approval answers for the agent whose call was approved; ask the operator for one of your own"},
	{audit.ErrApprovalOutOfScope, ReasonApprovalOutOfScope, "ask the user, and the operator for an approval that covers it"},
	{audit.ErrApprovalUnsigned, ReasonApprovalUnsigned, "do not act; tell the user and the operator"},
	{audit.ErrApprovalBadSignature, ReasonApprovalBadSignature, "do not act; tell the user and the operator"},
	{audit.ErrApprovalUnknownKey, ReasonApprovalUnknownKey, "do not act; tell the user and the operator"},
	{audit.ErrNoOperatorKeys, ReasonNoOperatorKeys, "do not act; tell the operator to start the server with --operator-keys"},
	{audit.ErrApprovalNotOnChain, ReasonApprovalNotOnChain, "do not act; tell the user and the operator"},
}

// RefusedReason is the approval layer's reason for err, when err is one of
// package audit's refusals of an approval; ok false for any other error.
func RefusedReason(id string, err error) (why string, ok bool) {
	detail := err.Error()
	var ce *audit.CoverageError
	if errors.As(err, &ce) {
		detail = ce.Detail
	}
	for _, r := range refusedApprovals {
		if errors.Is(err, r.err) {
			return reason(r.reason, "approval %s: %s; %s", id, detail, r.next), true
		}
	}
	return "", false
}

// ApprovalDetail is the approval layer's detail.
type ApprovalDetail struct {
	ApprovalID string       `json:"approval_id"`
	DecisionID string       `json:"decision_id,omitempty"` // the decision the approval answered
	Approver   string       `json:"approver,omitempty"`
	Verdict    string       `json:"verdict,omitempty"`
	Once       bool         `json:"once"`
	Scope      *audit.Scope `json:"scope,omitempty"`
	Until      string       `json:"until,omitempty"`
	Note       string       `json:"note,omitempty"`
	// KeyID is the operator key that signed the approval; Approver is
	// that key's name (or begins with it and a slash).
	KeyID string `json:"key_id,omitempty"`
}

// ApprovalReader reads approvals; audit.Log is one.
type ApprovalReader interface {
	Approval(ctx context.Context, id string) (*audit.Approval, error)
}

// Approvals is the approval layer: an operator's approval, presented by
// the caller, may lift the other layers' REQUIRE_CONFIRMATION to MAY_ACT,
// provided its signature verifies under Keys and it covers the call.
type Approvals struct {
	Log  ApprovalReader
	Keys *audit.OperatorKeys
	// MaxLifetime caps how long an approval is honoured after its
	// creation (audit.Approval.Capped); 0: audit.DefaultMaxLifetime.
	MaxLifetime time.Duration
}

// Judge judges the approval d.ApprovalID against the gate's decision base
// for the call d, at now. The layer's decision is the call's decision
// after the approval. once is whether the approval that lifted the call is
// single-use: it is then used only by the decision it lifts, in the
// transaction that records it (audit.Log.RecordUse), so a call abandoned
// at its deadline, or answered otherwise, uses nothing.
func (a Approvals) Judge(ctx context.Context, d *audit.Decision, base warrant.Verdict, now time.Time) (l LayerDecision, once bool, err error) {
	id := d.ApprovalID
	l = LayerDecision{Layer: ApprovalLayerName, Decision: audit.Verdict(base), Detail: ApprovalDetail{ApprovalID: id}}
	ap, err := a.Log.Approval(ctx, id)
	if errors.Is(err, audit.ErrNotFound) {
		l.Reasons = []string{reason(ReasonApprovalUnknown, "no approval %q is on record; use the approval_id the operator gave you", id)}
		return l, false, nil
	}
	if err == nil {
		_, err = a.Keys.Verify(ap)
	}
	if err != nil {
		// Not on the chain, or not signed by an operator key: nothing in
		// it is trusted, not even its approver, so the detail names the id
		// alone.
		why, ok := RefusedReason(id, err)
		if !ok {
			return l, false, fmt.Errorf("reading approval %s from the decision log: %w", id, err)
		}
		l.Reasons = []string{why}
		return l, false, nil
	}
	ap = ap.Capped(a.MaxLifetime)
	l.Detail = detailOf(ap)
	switch base {
	case warrant.MayActDecision:
		l.Reasons = []string{reason(ReasonApprovalNotNeeded, "the gate allows this action without an approval; approval %s was not used", id)}
		return l, false, nil
	case warrant.Deny:
		l.Reasons = []string{reason(ReasonApprovalCannotLift, "the evidence and policies, judged afresh, DENY this action; "+
			"an approval only lifts REQUIRE_CONFIRMATION, never DENY. Do not act; see the other layers for why")}
		return l, false, nil
	}
	if err := ap.Covers(d, now); err != nil {
		why, ok := RefusedReason(id, err)
		if !ok {
			return l, false, fmt.Errorf("checking approval %s: %w", id, err)
		}
		l.Reasons = []string{why}
		return l, false, nil
	}
	l.Decision = audit.VerdictMayAct
	l.Reasons = []string{reason(ReasonApproved, "%s approved this action (%s), answering decision %s", ap.Approver, coverage(ap), ap.DecisionID)}
	return l, ap.Once, nil
}

// Unlift decides layers again without the approval that lifted them, for
// the reason why (the log refused its use): the approval layer, always
// the last, keeps the other layers' REQUIRE_CONFIRMATION, which is the
// call's decision (an approval lifts nothing else).
func Unlift(layers []LayerDecision, why string) warrant.Verdict {
	last := &layers[len(layers)-1]
	last.Decision, last.Reasons = audit.VerdictRequireConfirmation, []string{why}
	return warrant.RequireConfirmation
}

func reason(name, format string, a ...any) string {
	return name + ": " + fmt.Sprintf(format, a...)
}

func detailOf(ap *audit.Approval) ApprovalDetail {
	d := ApprovalDetail{ApprovalID: ap.ID, DecisionID: ap.DecisionID, Approver: ap.Approver, Verdict: ap.Verdict,
		Once: ap.Once, Scope: ap.Scope, Note: ap.Note, KeyID: ap.KeyID}
	if !ap.Until.IsZero() {
		d.Until = ap.Until.UTC().Format(time.RFC3339Nano)
	}
	return d
}

// coverage says in words what an approval covers.
func coverage(ap *audit.Approval) string {
	what := "this exact action, any number of times"
	switch {
	case ap.Once:
		what = "once, this exact action"
	case ap.Scope != nil:
		what = "within its scope"
	}
	if !ap.Until.IsZero() {
		what += " until " + ap.Until.UTC().Format(time.RFC3339)
	}
	return what
}
