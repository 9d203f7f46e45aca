package gate

import "github.com/ewp-go/ewp/warrant"

// Answer is the gate's answer to one Request: the decision, each layer's
// verdict, what was judged, and the decision_id it was recorded under.
// An entrance renders it in its own protocol (mcp's may_act: a JSON
// object with the fields' snake_case names).
type Answer struct {
	// Decision is the most restrictive verdict of all layers, after the
	// approval layer when the call presented an approval.
	Decision warrant.Verdict
	// Layers is each layer's verdict, warrant first, approval last.
	Layers []LayerDecision
	// PropositionID is "" when the warrant layer was skipped; ViewID and
	// Warrant are then unset too.
	PropositionID string
	// ViewID is the latest snapshot, which was judged.
	ViewID string
	// Warrant is the judged snapshot's warrant: a warrant.Axes when
	// decided now, the axes as recorded when the answer is a replay.
	Warrant any
	// EvaluatedAt is the gate's clock at the decision (RFC 3339, to the
	// nanosecond).
	EvaluatedAt string
	Action      warrant.Action
	// RiskPolicy is the policy the action was judged under: a
	// warrant.RiskPolicy when decided now, as recorded on a replay.
	RiskPolicy any
	// DecisionID is the decision's id in the log; "" without a log.
	DecisionID string
	// Replayed is set when this is the decision recorded earlier under
	// the request's idempotency key, answered instead of deciding again.
	Replayed bool
}
