package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// recordGrace is how long the log may take, after its call was answered
// at the deadline, to record a refusal it had not taken up by then
// (recordLate).
const recordGrace = 10 * time.Second

// finish records the call's decision (ans, or the refusal err) and only
// then lets the answer go, with its decision_id. A decision that cannot
// be recorded is not answered: the call fails with EWP_INTERNAL_ERROR.
func (g *Gate) finish(ctx context.Context, dr *draft, ans *Answer, err error) (Answer, error) {
	if err != nil && (dr == nil || dr.replay) {
		return Answer{}, err
	}
	if dr == nil || dr.replay {
		return *ans, nil
	}
	replay, err := g.commit(ctx, dr, ans, err)
	if replay != nil || err != nil {
		return deref(replay), err
	}
	ans.DecisionID = dr.d.ID
	return *ans, nil
}

func deref(a *Answer) Answer {
	if a == nil {
		return Answer{}
	}
	return *a
}

// commit records dr: the refusal err, or else the answer ans completes it
// with (ans nil: dr is complete). replay is the answer of a concurrent
// retry with the same key that was recorded first; err is the refusal as
// recorded (a *RecordedError), or why nothing could be recorded.
func (g *Gate) commit(ctx context.Context, dr *draft, ans *Answer, err error) (replay *Answer, _ error) {
	d := &dr.d
	if err := dr.takeID(); err != nil {
		return nil, err
	}
	if err != nil {
		code, msg := g.st.explain(err)
		// A refusal does not bind the idempotency key: the retry that
		// fixes the arguments is decided afresh.
		d.Outcome, d.Code, d.Message, d.IdempotencyKey = audit.OutcomeRefused, code, recordedMessage(msg), ""
	} else if ans != nil {
		g.fill(dr, ans)
	}
	rerr := g.record(ctx, dr, ans)
	if errors.Is(rerr, context.DeadlineExceeded) {
		// The log gave the record up at a deadline (the call's, or the
		// batch's, which ends with it), having written nothing.
		return nil, g.recordLate(dr)
	}
	if errors.Is(rerr, audit.ErrDuplicateKey) && d.IdempotencyKey != "" {
		// A concurrent retry with the same key was recorded first: answer
		// as it was answered.
		return g.replayKey(ctx, dr)
	}
	if rerr != nil && g.st.cfg.Unavailable != nil && g.st.cfg.Unavailable(rerr) {
		return nil, fmt.Errorf("%w: recording decision %s in the decision log failed, so it is not answered: %w",
			ErrStoreUnavailable, d.ID, rerr)
	}
	if rerr != nil {
		return nil, fmt.Errorf("recording decision %s in the decision log failed, so it is not answered "+
			"(the operator must check the log's storage): %w", d.ID, rerr)
	}
	if err != nil {
		return nil, &RecordedError{Err: err, ID: d.ID} // the refusal names its record too
	}
	return nil, nil
}

// record records the finished decision: with its approval's use, in one
// transaction, when a single-use approval lifted it to MAY_ACT. When the
// log refuses the use (another call used the approval first, or it
// expired meanwhile), nothing was recorded and the call is decided again
// without the approval (Unlift), and that decision is recorded.
func (g *Gate) record(ctx context.Context, dr *draft, ans *Answer) error {
	d, log := &dr.d, g.st.cfg.Log
	if !dr.usesOnce || d.Outcome != audit.OutcomeMayAct || ans == nil {
		return log.Record(ctx, d)
	}
	err := log.RecordUse(ctx, d)
	if err == nil {
		return nil
	}
	why, refused := RefusedReason(d.ApprovalID, err)
	if !refused {
		return err
	}
	ans.Decision = Unlift(ans.Layers, why)
	g.fill(dr, ans)
	return log.Record(ctx, d)
}

// recordLate answers a call whose decision the log gave up at a deadline,
// having written nothing of it (a frozen or stuck store): with
// EWP_REFUSE_TIMEOUT, at the deadline, which grants nothing. The refusal
// is then recorded under the decision's id as soon as the log takes it
// (within recordGrace); a failure to is logged.
func (g *Gate) recordLate(dr *draft) error {
	late := refusal(CodeTimeout, "", "the decision log did not take this call's decision within the server's %v per-request deadline, "+
		"so it is not answered: do not act, and retry later. The refusal is recorded as decision %s once the log takes it; "+
		"if this persists, ask the operator to check the decision log's storage", g.st.cfg.Timeout, dr.d.ID)
	code, msg := g.st.explain(late)
	d := dr.d
	d.Outcome, d.Code, d.Message, d.IdempotencyKey = audit.OutcomeRefused, code, msg, ""
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), recordGrace)
		defer cancel()
		if err := g.st.cfg.Log.Record(ctx, &d); err != nil {
			g.st.log.Error("a call answered at its deadline could not have its refusal recorded", "decision_id", d.ID, "err", err)
		}
	}()
	return late
}

// fill completes the decision from the gate's answer.
func (g *Gate) fill(dr *draft, ans *Answer) {
	dr.d.Outcome = audit.Outcome(ans.Decision)
	if t, err := time.Parse(time.RFC3339Nano, ans.EvaluatedAt); err == nil {
		dr.d.Time = t // the instant the gate decided at, to the digit
	}
	dr.d.Layers = make([]audit.Layer, len(ans.Layers))
	for i, l := range ans.Layers {
		dr.d.Layers[i] = audit.Layer(l)
		if l.Layer == WarrantLayerName && l.Detail == nil && dr.axes != nil {
			dr.d.Layers[i].Detail = dr.axes
		}
	}
}

// replayKey answers with the decision recorded under dr's key.
func (g *Gate) replayKey(ctx context.Context, dr *draft) (*Answer, error) {
	prev, err := g.st.cfg.Log.ByIdempotencyKey(ctx, dr.d.Caller.Credential, dr.d.IdempotencyKey)
	if err != nil {
		return nil, fmt.Errorf("reading the decision log for idempotency_key %q: %w", dr.d.IdempotencyKey, err)
	}
	return g.replayOf(ctx, dr, prev)
}

// replayOf is the earlier decision prev as the gate answered it, provided
// this call asks the same thing and prev may still be replayed
// (Replays); a key reused for another call is refused rather than
// answered with a decision about something else.
func (g *Gate) replayOf(ctx context.Context, dr *draft, prev *audit.Decision) (*Answer, error) {
	if diff := Differs(&dr.d, prev); diff != "" {
		return nil, refusal(CodeIdempotencyKeyReused, "idempotency_key",
			"%q was used for decision %s, whose %s differs from this call's; use a new key for a new call",
			dr.d.IdempotencyKey, prev.ID, diff)
	}
	err := g.st.replays.Replayable(ctx, prev, g.Now())
	if errors.Is(err, audit.ErrReplayExpired) {
		return nil, refusal(CodeIdempotencyKeyExpired, "idempotency_key",
			"%q names a decision that is no longer answered from the record: %v; use a new key, and the call is decided afresh",
			prev.IdempotencyKey, err)
	}
	if err != nil {
		return nil, err
	}
	dr.update(func(dr *draft) { dr.replay = true })
	ans := &Answer{Decision: warrant.Verdict(prev.Outcome), EvaluatedAt: prev.Time.UTC().Format(time.RFC3339Nano),
		Action:     warrant.Action{ActionID: prev.ActionID, Kind: prev.ActionKind, Risk: prev.Risk, Reversible: *prev.Reversible},
		RiskPolicy: prev.RiskPolicy, DecisionID: prev.ID, Replayed: true, Layers: make([]LayerDecision, len(prev.Layers))}
	for i, l := range prev.Layers {
		if l.Layer == WarrantLayerName && l.Detail != nil && prev.PropositionID != "" && ans.Warrant == nil {
			ans.Warrant, l.Detail = l.Detail, nil // the record keeps the axes as the warrant layer's detail
		}
		ans.Layers[i] = LayerDecision(l)
	}
	ans.PropositionID, ans.ViewID = prev.PropositionID, prev.ViewID
	return ans, nil
}

// ErrNoResults is RecordResult's error when the decision log keeps no
// results (it does not implement audit.Results).
var ErrNoResults = errors.New("gate: the decision log keeps no results of forwarded calls")

// RecordResult records what a forwarded call did (audit.Results), after
// the fact; nil without a decision log, ErrNoResults when the log keeps
// none.
func (g *Gate) RecordResult(ctx context.Context, res audit.Result) error {
	if g.st == nil || g.st.cfg.Log == nil {
		return nil
	}
	rs, ok := g.st.cfg.Log.(audit.Results)
	if !ok {
		return ErrNoResults
	}
	if res.Time.IsZero() {
		res.Time = g.Now().UTC()
	}
	return rs.RecordResult(ctx, &res)
}
