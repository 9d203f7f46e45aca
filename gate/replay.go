package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// Replays says whether an earlier decision may answer a retry under its
// idempotency key: the retry must ask the same thing (Differs), and the
// decision must still be replayable (audit.Replayable: within Window, and
// a MAY_ACT lifted by an approval only while that approval, as the gate
// honours it now, could give it).
type Replays struct {
	Log ApprovalReader
	// MaxLifetime caps an approval as Approvals does.
	MaxLifetime time.Duration
	// Window is how long after a decision a retry is answered from its
	// record; 0: audit's default.
	Window time.Duration
}

// Replayable is nil when prev may answer a retry at now; an error
// wrapping audit.ErrReplayExpired when it may no longer, and any other
// error when the log could not be read.
func (r Replays) Replayable(ctx context.Context, prev *audit.Decision, now time.Time) error {
	lifted, err := r.liftedBy(ctx, prev)
	if err != nil {
		return err
	}
	return audit.Replayable(prev, lifted, now, r.Window)
}

// liftedBy is the approval that lifted prev to MAY_ACT, as the gate
// honours it now; nil when prev is no MAY_ACT or its other layers allowed
// it already.
func (r Replays) liftedBy(ctx context.Context, prev *audit.Decision) (*audit.Approval, error) {
	if prev.Outcome != audit.OutcomeMayAct || prev.ApprovalID == "" {
		return nil, nil
	}
	var judged []LayerDecision
	for _, l := range prev.Layers {
		if l.Layer != ApprovalLayerName {
			judged = append(judged, LayerDecision(l))
		}
	}
	if Combine(judged) == warrant.MayActDecision {
		return nil, nil
	}
	ap, err := r.Log.Approval(ctx, prev.ApprovalID)
	if errors.Is(err, audit.ErrNotFound) {
		// Not on a sound log; an approval that is gone lifts nothing.
		return nil, fmt.Errorf("%w: its MAY_ACT came from approval %s, which is not on record", audit.ErrReplayExpired, prev.ApprovalID)
	}
	if err != nil {
		return nil, fmt.Errorf("reading approval %s from the decision log: %w", prev.ApprovalID, err)
	}
	return ap.Capped(r.MaxLifetime), nil
}

// Differs names the first thing call d asks differently from decision
// prev, as the request field (proposition_id, action.kind, ...); "" when
// it is the same call. Proposition and action compare as an approval
// compares them (audit.Action.Differs).
func Differs(d, prev *audit.Decision) string {
	switch {
	case prev.Tool != d.Tool:
		return "tool"
	case prev.ApprovalID != d.ApprovalID:
		return "approval_id"
	}
	if fields := prev.Action().Differs(d.Action()); len(fields) > 0 {
		return requestFieldOf[fields[0]]
	}
	return ""
}

// requestFieldOf names a decision's action field as the request's.
var requestFieldOf = map[string]string{
	"proposition_id": "proposition_id", "action_id": "action.action_id", "action_kind": "action.kind",
	"risk": "action.risk", "reversible": "action.reversible", "concepts": "action.concepts",
	"tool_name": "action.tool_name", "arguments_hash": "action.arguments",
}
