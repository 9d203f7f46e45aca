package mcp

import (
	"context"
	"errors"
	"fmt"

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

// Reasons of the approval layer, which the gate defines (gate.Approvals);
// named here too because MCP clients and tests know them as mcp's.
const (
	ReasonApproved                 = gate.ReasonApproved
	ReasonApprovalNotNeeded        = gate.ReasonApprovalNotNeeded
	ReasonApprovalCannotLift       = gate.ReasonApprovalCannotLift
	ReasonApprovalRejected         = gate.ReasonApprovalRejected
	ReasonApprovalExpired          = gate.ReasonApprovalExpired
	ReasonApprovalUsed             = gate.ReasonApprovalUsed
	ReasonApprovalOutOfScope       = gate.ReasonApprovalOutOfScope
	ReasonApprovalWrongAction      = gate.ReasonApprovalWrongAction
	ReasonApprovalWrongProposition = gate.ReasonApprovalWrongProposition
	ReasonApprovalUnknown          = gate.ReasonApprovalUnknown
	ReasonApprovalsDisabled        = gate.ReasonApprovalsDisabled
	ReasonApprovalUnsigned         = gate.ReasonApprovalUnsigned
	ReasonApprovalBadSignature     = gate.ReasonApprovalBadSignature
	ReasonApprovalUnknownKey       = gate.ReasonApprovalUnknownKey
	ReasonNoOperatorKeys           = gate.ReasonNoOperatorKeys
	ReasonApprovalNotOnChain       = gate.ReasonApprovalNotOnChain
)

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
	if diff := gate.Differs(&dr.d, prev); diff != "" {
		return nil, refuse(CodeIdempotencyKeyReused, "idempotency_key",
			"%q was used for decision %s, whose %s differs from this call's; use a new key for a new call",
			dr.d.IdempotencyKey, prev.ID, diff)
	}
	if err := s.replayable(ctx, prev); err != nil {
		return nil, err
	}
	dr.update(func(dr *draft) { dr.replay = true })
	ans := &gate.Answer{Decision: warrant.Verdict(prev.Outcome), EvaluatedAt: prev.Time.UTC().Format(timeLayout),
		Action:     warrant.Action{ActionID: prev.ActionID, Kind: prev.ActionKind, Risk: prev.Risk, Reversible: *prev.Reversible},
		RiskPolicy: prev.RiskPolicy, DecisionID: prev.ID, Replayed: true, Layers: make([]gate.LayerDecision, len(prev.Layers))}
	for i, l := range prev.Layers {
		if l.Layer == gate.WarrantLayerName && prev.PropositionID != "" {
			ans.Warrant, l.Detail = l.Detail, nil // the record keeps the axes as the warrant layer's detail
		}
		ans.Layers[i] = gate.LayerDecision(l)
	}
	ans.PropositionID, ans.ViewID = prev.PropositionID, prev.ViewID
	return mayActAnswer{ans}, nil
}

// replayable refuses to answer from prev when the gate says it may no
// longer be replayed (gate.Replays): past the window, or a MAY_ACT its
// approval could not give now.
func (s *Server) replayable(ctx context.Context, prev *audit.Decision) error {
	replays := gate.Replays{Log: s.decisions.Log, MaxLifetime: s.decisions.MaxApprovalLifetime, Window: s.decisions.ReplayWindow}
	err := replays.Replayable(ctx, prev, s.now())
	if errors.Is(err, audit.ErrReplayExpired) {
		return refuse(CodeIdempotencyKeyExpired, "idempotency_key",
			"%q names a decision that is no longer answered from the record: %v; use a new key, and the call is decided afresh",
			prev.IdempotencyKey, err)
	}
	return err
}

// gate is the composed gate past the warrant layer: the guard's layers,
// then, with a decision log, the approval layer (gate.Approvals). The
// evidence is judged afresh: an approval only ever lifts
// REQUIRE_CONFIRMATION to MAY_ACT, never DENY, and a refused approval
// leaves the gate's decision unchanged with the layer saying why.
func (s *Server) gate() gate.Gate {
	g := gate.Gate{Layers: s.layers, Now: s.now}
	if s.decisions != nil {
		g.Approvals = &gate.Approvals{Log: s.decisions.Log, Keys: s.decisions.OperatorKeys, MaxLifetime: s.decisions.MaxApprovalLifetime}
	}
	return g
}
