package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
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
	ReasonApprovalUnknown     = "APPROVAL_UNKNOWN"
	ReasonApprovalsDisabled   = "APPROVALS_DISABLED"
)

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
}

// beginMayAct reads approval_id and idempotency_key once the proposition
// and the action are decoded, notes the action in the decision, and
// answers a retry from the record: a non-nil replay is the decision an
// earlier call recorded under the same idempotency key.
func (s *Server) beginMayAct(ctx context.Context, a args, pid string, act warrant.Action, gc *guardCall, p warrant.RiskPolicy) (replay any, err error) {
	approval, hasApproval, err := a.id("", "approval_id")
	if err != nil {
		return nil, err
	}
	key, hasKey, err := a.id("", "idempotency_key")
	if err != nil {
		return nil, err
	}
	if s.decisions == nil {
		return nil, logOff(hasApproval, hasKey)
	}
	noteAction(ctx, pid, act, gc, p)
	dr := draftFrom(ctx)
	dr.d.ApprovalID = approval
	if !hasKey {
		return nil, nil
	}
	dr.d.IdempotencyKey = key
	dr.unlock = s.decisions.keys.lock(dr.d.Caller.Credential + "\x00" + key)
	prev, err := s.decisions.Log.ByIdempotencyKey(ctx, dr.d.Caller.Credential, key)
	if errors.Is(err, audit.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the decision log for idempotency_key %q: %w", key, err)
	}
	return s.replayOf(dr, prev)
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
	return s.replayOf(dr, prev)
}

// replayOf is the earlier decision prev as may_act answered it, provided
// this call asks the same thing; a key reused for another call is refused
// rather than answered with a decision about something else.
func (s *Server) replayOf(dr *draft, prev *audit.Decision) (any, error) {
	if diff := differs(&dr.d, prev); diff != "" {
		return nil, refuse(CodeIdempotencyKeyReused, "idempotency_key",
			"%q was used for decision %s, whose %s differs from this call's; use a new key for a new call",
			dr.d.IdempotencyKey, prev.ID, diff)
	}
	dr.replay = true
	out := map[string]any{"decision": prev.Outcome, "evaluated_at": prev.Time.UTC().Format(timeLayout),
		"action":      warrant.Action{ActionID: prev.ActionID, Kind: prev.ActionKind, Risk: prev.Risk, Reversible: *prev.Reversible},
		"risk_policy": prev.RiskPolicy, "decision_id": prev.ID, "replayed": true}
	layers := make([]audit.Layer, len(prev.Layers))
	for i, l := range prev.Layers {
		if l.Layer == warrantLayer && prev.PropositionID != "" {
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

// differs names the first thing a call asks differently from decision
// prev; "" when it is the same call.
func differs(d, prev *audit.Decision) string {
	switch {
	case prev.Tool != d.Tool:
		return "tool"
	case prev.PropositionID != d.PropositionID:
		return "proposition_id"
	case prev.ApprovalID != d.ApprovalID:
		return "approval_id"
	}
	return actionDiffers(d, prev)
}

// actionDiffers names the first action field of d that is not prev's.
func actionDiffers(d, prev *audit.Decision) string {
	switch {
	case prev.ActionID != d.ActionID:
		return "action.action_id"
	case prev.ActionKind != d.ActionKind:
		return "action.kind"
	case prev.Risk != d.Risk:
		return "action.risk"
	case prev.Reversible == nil || d.Reversible == nil || *prev.Reversible != *d.Reversible:
		return "action.reversible"
	case !slices.Equal(prev.Concepts, d.Concepts):
		return "action.concepts"
	case prev.ToolName != d.ToolName:
		return "action.tool_name"
	case prev.ArgumentsHash != d.ArgumentsHash:
		return "action.arguments"
	}
	return ""
}

// withApproval combines the layers and, when the call presented an
// approval, adds the approval layer. The evidence was judged afresh: an
// approval only ever lifts REQUIRE_CONFIRMATION to MAY_ACT, never DENY,
// and a refused approval leaves the gate's decision unchanged with the
// layer saying why.
func (s *Server) withApproval(ctx context.Context, layers []LayerDecision) ([]LayerDecision, string, error) {
	base := combine(layers)
	dr := draftFrom(ctx)
	if dr == nil || dr.d.ApprovalID == "" {
		return layers, base, nil
	}
	l, err := s.approvalLayer(ctx, dr, base)
	if err != nil {
		return nil, "", err
	}
	return append(layers, l), l.Decision, nil
}

// approvalLayer judges the approval dr presents against the gate's decision
// base. Its decision is the call's decision after the approval.
func (s *Server) approvalLayer(ctx context.Context, dr *draft, base string) (LayerDecision, error) {
	id := dr.d.ApprovalID
	l := LayerDecision{Layer: approvalLayerName, Decision: base, Detail: approvalDetail{ApprovalID: id}}
	ap, err := s.decisions.Log.Approval(ctx, id)
	if errors.Is(err, audit.ErrNotFound) {
		l.Reasons = []string{reason(ReasonApprovalUnknown, "no approval %q is on record; use the approval_id the operator gave you", id)}
		return l, nil
	}
	if err != nil {
		return l, fmt.Errorf("reading approval %s from the decision log: %w", id, err)
	}
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
	answered, err := s.decisions.Log.Decision(ctx, ap.DecisionID)
	if err != nil {
		return l, fmt.Errorf("reading decision %s, which approval %s answers: %w", ap.DecisionID, id, err)
	}
	if why, ok := approvalCovers(ap, answered, &dr.d, s.now()); !ok {
		l.Reasons = []string{why}
		return l, nil
	}
	if ap.Once {
		err := s.decisions.Log.Consume(ctx, id, dr.d.ID)
		if errors.Is(err, audit.ErrApprovalUsed) {
			l.Reasons = []string{reason(ReasonApprovalUsed, "approval %s was single-use and has already been used; "+
				"ask the user, and the operator for a new approval", id)}
			return l, nil
		}
		if err != nil {
			return l, fmt.Errorf("consuming single-use approval %s: %w", id, err)
		}
	}
	l.Decision = warrant.MayActDecision
	l.Reasons = []string{reason(ReasonApproved, "%s approved this action (%s), answering decision %s", ap.Approver, coverage(ap), ap.DecisionID)}
	return l, nil
}

func reason(name, format string, a ...any) string {
	return name + ": " + fmt.Sprintf(format, a...)
}

func detailOf(ap *audit.Approval) approvalDetail {
	d := approvalDetail{ApprovalID: ap.ID, DecisionID: ap.DecisionID, Approver: ap.Approver, Verdict: ap.Verdict,
		Once: ap.Once, Scope: ap.Scope, Note: ap.Note}
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

// approvalCovers says whether approval ap lets call d go ahead, judged at
// now: approved, unexpired, and covering d — the same action as the
// decision it answered, or inside its scope. Whether a single-use approval
// is still unused is settled by Log.Consume. On false, why is the reason.
//
// merge: the store's (*audit.Approval).Covers (branch audit) is the shared
// rule; replace this body with a call to it and map its error to these
// reason names.
func approvalCovers(ap *audit.Approval, answered, d *audit.Decision, now time.Time) (why string, ok bool) {
	switch {
	case ap.Verdict != audit.Approved:
		note := ""
		if ap.Note != "" {
			note = " (" + ap.Note + ")"
		}
		return reason(ReasonApprovalRejected, "%s rejected decision %s%s; do not act, tell the user", ap.Approver, ap.DecisionID, note), false
	case !ap.Until.IsZero() && now.After(ap.Until):
		return reason(ReasonApprovalExpired, "approval %s expired at %s (server clock %s); ask the operator for a new one",
			ap.ID, ap.Until.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)), false
	case !ap.Once && ap.Scope != nil:
		if field := outOfScope(ap.Scope, d); field != "" {
			return reason(ReasonApprovalOutOfScope, "approval %s covers %s, and this call's %s is outside it; "+
				"ask the user, and the operator for an approval that covers it", ap.ID, describeScope(ap.Scope), field), false
		}
		return "", true
	}
	if d.PropositionID != answered.PropositionID {
		return wrongAction(ap, "proposition_id"), false
	}
	if field := actionDiffers(d, answered); field != "" {
		return wrongAction(ap, field), false
	}
	return "", true
}

func wrongAction(ap *audit.Approval, field string) string {
	return reason(ReasonApprovalWrongAction, "approval %s answers decision %s, whose %s differs from this call's; "+
		"an approval covers exactly the action it was given for", ap.ID, ap.DecisionID, field)
}

// outOfScope names the first field of d a scope does not cover; "" when it
// covers d. The proposition is always required; the other fields count
// when set. Concepts are covered when each concept d names is in the scope.
func outOfScope(sc *audit.Scope, d *audit.Decision) string {
	switch {
	case sc.PropositionID == "" || sc.PropositionID != d.PropositionID:
		return "proposition_id"
	case sc.ActionKind != "" && sc.ActionKind != d.ActionKind:
		return "action.kind"
	case sc.ToolName != "" && sc.ToolName != d.ToolName:
		return "action.tool_name"
	case len(sc.Concepts) > 0 && !conceptsWithin(d.Concepts, sc.Concepts):
		return "action.concepts"
	}
	return ""
}

// conceptsWithin: every concept of have is in scope (names compare
// case-insensitively, as the grounding check reads them). An action that
// names no concepts is not within a concepts scope.
func conceptsWithin(have, scope []string) bool {
	if len(have) == 0 {
		return false
	}
	for _, c := range have {
		if !slices.ContainsFunc(scope, func(s string) bool { return strings.EqualFold(s, c) }) {
			return false
		}
	}
	return true
}

func describeScope(sc *audit.Scope) string {
	parts := []string{"proposition " + sc.PropositionID}
	if sc.ActionKind != "" {
		parts = append(parts, "kind "+sc.ActionKind)
	}
	if sc.ToolName != "" {
		parts = append(parts, "tool "+sc.ToolName)
	}
	if len(sc.Concepts) > 0 {
		parts = append(parts, "concepts "+strings.Join(sc.Concepts, ", "))
	}
	return strings.Join(parts, ", ")
}
