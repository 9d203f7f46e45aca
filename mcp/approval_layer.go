package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

// Codes of the decision log's refusals.
const (
	// CodeApprovalsDisabled: may_act got an approval_id but the server runs
	// without a decision log (ewp-mcp --audit off), so it has no approvals.
	CodeApprovalsDisabled = "EWP_REFUSE_APPROVALS_DISABLED"
	// CodeNoDecisionLog: idempotency_key needs the decision log, which is off.
	CodeNoDecisionLog = "EWP_REFUSE_NO_DECISION_LOG"
	// CodeIdempotencyKeyReused: the key was already used for a different
	// call (another proposition, action or approval).
	CodeIdempotencyKeyReused = "EWP_REFUSE_IDEMPOTENCY_KEY_REUSED"
	// CodeIdempotencyKeyExpired: the key names a decision that is no
	// longer answered from the record (past the replay window, or its
	// MAY_ACT came from an approval that could not give it now).
	CodeIdempotencyKeyExpired = "EWP_REFUSE_IDEMPOTENCY_KEY_EXPIRED"
)

// approvalLayerName is the layer an approval_id adds to may_act's result.
const approvalLayerName = "approval"

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
	{audit.ErrApprovalOutOfScope, ReasonApprovalOutOfScope, "ask the user, and the operator for an approval that covers it"},
	{audit.ErrApprovalUnsigned, ReasonApprovalUnsigned, "do not act; tell the user and the operator"},
	{audit.ErrApprovalBadSignature, ReasonApprovalBadSignature, "do not act; tell the user and the operator"},
	{audit.ErrApprovalUnknownKey, ReasonApprovalUnknownKey, "do not act; tell the user and the operator"},
	{audit.ErrNoOperatorKeys, ReasonNoOperatorKeys, "do not act; tell the operator to start the server with --operator-keys"},
	{audit.ErrApprovalNotOnChain, ReasonApprovalNotOnChain, "do not act; tell the user and the operator"},
}

// refusedReason is the approval layer's reason for err, when err is one of
// package audit's refusals of an approval; ok false for any other error.
func refusedReason(id string, err error) (why string, ok bool) {
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

// approvalDetail is the approval layer's detail.
type approvalDetail struct {
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

// beginMayAct refuses approval_id and idempotency_key when there is no
// decision log, notes the action in the decision, and answers a retry
// from the record: a non-nil replay is the decision an earlier call
// recorded under the same idempotency key.
func (s *Server) beginMayAct(ctx context.Context, c *mayActCall) (replay any, err error) {
	approval, key := c.ApprovalID, c.IdempotencyKey
	hasKey := key != ""
	if s.decisions == nil {
		return nil, logOff(approval != "", hasKey)
	}
	noteAction(ctx, c.PropositionID, c.Action, c.Guard, c.RiskPolicy)
	dr := draftFrom(ctx)
	dr.update(func(dr *draft) { dr.d.ApprovalID = approval })
	if !hasKey {
		return nil, nil
	}
	unlock := s.decisions.keys.lock(dr.d.Caller.Credential + "\x00" + key)
	dr.update(func(dr *draft) { dr.d.IdempotencyKey, dr.unlock = key, unlock })
	prev, err := s.decisions.Log.ByIdempotencyKey(ctx, dr.d.Caller.Credential, key)
	if errors.Is(err, audit.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the decision log for idempotency_key %q: %w", key, err)
	}
	// A replay answers this call, so the call's evaluated_at is held to
	// the same clock as a fresh one's.
	if err := c.checkSkew(s.now()); err != nil {
		return nil, err
	}
	return s.replayOf(ctx, dr, prev)
}

// logOff refuses the arguments that need the decision log.
func logOff(approval, key bool) error {
	if approval {
		return refuse(CodeApprovalsDisabled, "approval_id", "%s: this server runs without a decision log (ewp-mcp --audit off), "+
			"so no approval can be checked; drop approval_id, or ask the operator to run ewp-mcp with its decision log", ReasonApprovalsDisabled)
	}
	if key {
		return refuse(CodeNoDecisionLog, "idempotency_key", "this server runs without a decision log (ewp-mcp --audit off), "+
			"so no decision is kept to return on a retry; drop idempotency_key")
	}
	return nil
}

// replayKey answers with the decision recorded under dr's key.
func (s *Server) replayKey(ctx context.Context, dr *draft) (any, error) {
	prev, err := s.decisions.Log.ByIdempotencyKey(ctx, dr.d.Caller.Credential, dr.d.IdempotencyKey)
	if err != nil {
		return nil, fmt.Errorf("reading the decision log for idempotency_key %q: %w", dr.d.IdempotencyKey, err)
	}
	return s.replayOf(ctx, dr, prev)
}

// replayOf is the earlier decision prev as may_act answered it, provided
// this call asks the same thing and prev may still be replayed
// (audit.Replayable); a key reused for another call is refused rather
// than answered with a decision about something else.
func (s *Server) replayOf(ctx context.Context, dr *draft, prev *audit.Decision) (any, error) {
	if diff := differs(&dr.d, prev); diff != "" {
		return nil, refuse(CodeIdempotencyKeyReused, "idempotency_key",
			"%q was used for decision %s, whose %s differs from this call's; use a new key for a new call",
			dr.d.IdempotencyKey, prev.ID, diff)
	}
	if err := s.replayable(ctx, prev); err != nil {
		return nil, err
	}
	dr.update(func(dr *draft) { dr.replay = true })
	out := map[string]any{"decision": warrant.Verdict(prev.Outcome), "evaluated_at": prev.Time.UTC().Format(timeLayout),
		"action":      warrant.Action{ActionID: prev.ActionID, Kind: prev.ActionKind, Risk: prev.Risk, Reversible: *prev.Reversible},
		"risk_policy": prev.RiskPolicy, "decision_id": prev.ID, "replayed": true}
	layers := make([]audit.Layer, len(prev.Layers))
	for i, l := range prev.Layers {
		if l.Layer == gate.WarrantLayerName && prev.PropositionID != "" {
			out["warrant"], l.Detail = l.Detail, nil // the record keeps the axes as the warrant layer's detail
		}
		layers[i] = l
	}
	out["layers"] = layers
	if prev.PropositionID != "" {
		out["proposition_id"], out["view_id"] = prev.PropositionID, prev.ViewID
	}
	return out, nil
}

// replayable refuses to answer from prev when package audit says it may
// no longer be replayed: past the window, or a MAY_ACT its approval could
// not give now.
func (s *Server) replayable(ctx context.Context, prev *audit.Decision) error {
	lifted, err := s.liftedBy(ctx, prev)
	if err == nil {
		err = audit.Replayable(prev, lifted, s.now(), s.decisions.ReplayWindow)
	}
	if errors.Is(err, audit.ErrReplayExpired) {
		return refuse(CodeIdempotencyKeyExpired, "idempotency_key",
			"%q names a decision that is no longer answered from the record: %v; use a new key, and the call is decided afresh",
			prev.IdempotencyKey, err)
	}
	return err
}

// liftedBy is the approval that lifted prev to MAY_ACT, as the gate
// honours it now; nil when prev is no MAY_ACT or its other layers allowed
// it already.
func (s *Server) liftedBy(ctx context.Context, prev *audit.Decision) (*audit.Approval, error) {
	if prev.Outcome != audit.OutcomeMayAct || prev.ApprovalID == "" {
		return nil, nil
	}
	var judged []gate.LayerDecision
	for _, l := range prev.Layers {
		if l.Layer != approvalLayerName {
			judged = append(judged, gate.LayerDecision(l))
		}
	}
	if gate.Combine(judged) == warrant.MayActDecision {
		return nil, nil
	}
	ap, err := s.decisions.Log.Approval(ctx, prev.ApprovalID)
	if errors.Is(err, audit.ErrNotFound) {
		// Not on a sound log; an approval that is gone lifts nothing.
		return nil, fmt.Errorf("%w: its MAY_ACT came from approval %s, which is not on record", audit.ErrReplayExpired, prev.ApprovalID)
	}
	if err != nil {
		return nil, fmt.Errorf("reading approval %s from the decision log: %w", prev.ApprovalID, err)
	}
	return ap.Capped(s.decisions.MaxApprovalLifetime), nil
}

// differs names the first thing a call asks differently from decision
// prev; "" when it is the same call. Proposition and action compare as an
// approval compares them (audit.Action.Differs).
func differs(d, prev *audit.Decision) string {
	switch {
	case prev.Tool != d.Tool:
		return "tool"
	case prev.ApprovalID != d.ApprovalID:
		return "approval_id"
	}
	if fields := prev.Action().Differs(d.Action()); len(fields) > 0 {
		return argumentOf[fields[0]]
	}
	return ""
}

// argumentOf names a decision's action field as may_act's argument.
var argumentOf = map[string]string{
	"proposition_id": "proposition_id", "action_id": "action.action_id", "action_kind": "action.kind",
	"risk": "action.risk", "reversible": "action.reversible", "concepts": "action.concepts",
	"tool_name": "action.tool_name", "arguments_hash": "action.arguments",
}

// withApproval combines the layers and, when the call presented an
// approval, adds the approval layer. The evidence was judged afresh: an
// approval only ever lifts REQUIRE_CONFIRMATION to MAY_ACT, never DENY,
// and a refused approval leaves the gate's decision unchanged with the
// layer saying why.
func (s *Server) withApproval(ctx context.Context, layers []gate.LayerDecision) ([]gate.LayerDecision, warrant.Verdict, error) {
	base := gate.Combine(layers)
	dr := draftFrom(ctx)
	if dr == nil || dr.d.ApprovalID == "" {
		return layers, base, nil
	}
	l, err := s.approvalLayer(ctx, dr, base)
	if err != nil {
		return nil, "", err
	}
	return append(layers, l), warrant.Verdict(l.Decision), nil
}

// approvalLayer judges the approval dr presents against the gate's decision
// base. Its decision is the call's decision after the approval.
func (s *Server) approvalLayer(ctx context.Context, dr *draft, base warrant.Verdict) (gate.LayerDecision, error) {
	id := dr.d.ApprovalID
	l := gate.LayerDecision{Layer: approvalLayerName, Decision: audit.Verdict(base), Detail: approvalDetail{ApprovalID: id}}
	ap, err := s.decisions.Log.Approval(ctx, id)
	if errors.Is(err, audit.ErrNotFound) {
		l.Reasons = []string{reason(ReasonApprovalUnknown, "no approval %q is on record; use the approval_id the operator gave you", id)}
		return l, nil
	}
	if err == nil {
		_, err = s.decisions.OperatorKeys.Verify(ap)
	}
	if err != nil {
		// Not on the chain, or not signed by an operator key: nothing in
		// it is trusted, not even its approver, so the detail names the id
		// alone.
		why, ok := refusedReason(id, err)
		if !ok {
			return l, fmt.Errorf("reading approval %s from the decision log: %w", id, err)
		}
		l.Reasons = []string{why}
		return l, nil
	}
	ap = ap.Capped(s.decisions.MaxApprovalLifetime)
	l.Detail = detailOf(ap)
	switch base {
	case warrant.MayActDecision:
		l.Reasons = []string{reason(ReasonApprovalNotNeeded, "the gate allows this action without an approval; approval %s was not used", id)}
		return l, nil
	case warrant.Deny:
		l.Reasons = []string{reason(ReasonApprovalCannotLift, "the evidence and policies, judged afresh, DENY this action; "+
			"an approval only lifts REQUIRE_CONFIRMATION, never DENY. Do not act; see the other layers for why")}
		return l, nil
	}
	// A single-use approval is used only by the decision it lifts, in the
	// transaction that records it (finishRecord): this judges coverage
	// alone, so a call abandoned at its deadline, or answered otherwise,
	// uses nothing.
	err = ap.Covers(&dr.d, s.now())
	if err != nil {
		why, ok := refusedReason(id, err)
		if !ok {
			return l, fmt.Errorf("checking approval %s: %w", id, err)
		}
		l.Reasons = []string{why}
		return l, nil
	}
	dr.update(func(dr *draft) { dr.usesOnce = ap.Once })
	l.Decision = audit.VerdictMayAct
	l.Reasons = []string{reason(ReasonApproved, "%s approved this action (%s), answering decision %s", ap.Approver, coverage(ap), ap.DecisionID)}
	return l, nil
}

func reason(name, format string, a ...any) string {
	return name + ": " + fmt.Sprintf(format, a...)
}

func detailOf(ap *audit.Approval) approvalDetail {
	d := approvalDetail{ApprovalID: ap.ID, DecisionID: ap.DecisionID, Approver: ap.Approver, Verdict: ap.Verdict,
		Once: ap.Once, Scope: ap.Scope, Note: ap.Note, KeyID: ap.KeyID}
	if !ap.Until.IsZero() {
		d.Until = ap.Until.UTC().Format(timeLayout)
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
