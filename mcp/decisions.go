package mcp

import (
	"context"
	"errors"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

// DecisionLog configures WithDecisionLog.
type DecisionLog struct {
	// Log is where decisions are recorded and approvals are read.
	Log audit.Log
	// PolicySetHash is the sha256 (hex) of the edge-policy file the guard
	// loaded, recorded with every decision; "" when none was loaded.
	PolicySetHash string
	// Unavailable, when set, tells a failure of the log that is its
	// database being unreachable (the call is then answered
	// EWP_STORE_UNAVAILABLE, not EWP_INTERNAL_ERROR; still unanswered).
	Unavailable func(error) bool
	// MaxApprovalLifetime is the longest an approval is honoured after
	// its creation, whatever until it claims (audit.Approval.Capped); 0:
	// audit.DefaultMaxLifetime.
	MaxApprovalLifetime time.Duration
	// ReplayWindow is how long after a decision a retry with its
	// idempotency_key is answered from the record; 0: DefaultReplayWindow.
	ReplayWindow time.Duration
	// OperatorKeys are the public keys whose signatures make an approval
	// count (ewp-mcp --operator-keys). An approval not signed by one of
	// them, or read from the log other than as its chain recorded it, is
	// refused with a reason naming why; with no keys every approval is.
	OperatorKeys *audit.OperatorKeys
	// RedactArguments names the members of an action's arguments whose
	// values are recorded as RedactedMarker (a member is redacted when its
	// name contains one, ignoring case); nil means
	// DefaultRedactedArguments, empty none.
	RedactArguments []string
}

// WithDecisionLog records every may_act and check_grounding call in the
// log before its answer is sent, refusals included, and answers carry the
// decision_id. It also enables may_act's approval_id and idempotency_key,
// the decision_get tool and the ewp://decision/{decision_id} resource.
// Without it the server answers as before and refuses approval_id and
// idempotency_key with a code that says the log is off.
func WithDecisionLog(d DecisionLog) Option {
	return func(s *Server) {
		if d.Log != nil {
			s.decisions = &d
		}
	}
}

// recordedTools are the calls that are decisions: the gate decides and
// records them (gated).
var recordedTools = map[string]bool{audit.ToolMayAct: true, audit.ToolCheckGrounding: true}

// newGate is the gate the server's recorded tools ask: the warrant layer
// over the server's store, its layers, and its decision log.
func (s *Server) newGate() *gate.Gate {
	cfg := gate.Config{Ledger: s.ledger(), Layers: s.layers, Now: s.now, Timeout: s.timeout, Guard: s.guard,
		Explain: explain, Logger: s.log}
	if d := s.decisions; d != nil {
		cfg.Log, cfg.OperatorKeys, cfg.MaxApprovalLifetime = d.Log, d.OperatorKeys, d.MaxApprovalLifetime
		cfg.ReplayWindow, cfg.PolicySetHash, cfg.Unavailable = d.ReplayWindow, d.PolicySetHash, d.Unavailable
		cfg.RedactArguments = d.RedactArguments
	}
	g, err := gate.New(cfg)
	if err != nil {
		panic(err) // New refuses no configuration the server builds
	}
	return g
}

// explain is the code and message a refusal is recorded with: what the
// caller is answered.
func explain(err error) (code, message string) {
	te := codeOf(err)
	return te.Error, te.Message
}

// who is the caller of ctx's call as the gate judges and records it: the
// principal the transport established (identity.PrincipalFrom), and the
// transport's facts, which only a decision log reads.
func (s *Server) who(ctx context.Context) gate.Request {
	r := gate.Request{Agent: requestAgent(ctx)}
	if s.decisions != nil {
		r.Caller = callerFrom(ctx)
	}
	return r
}

// ledger is the server's store as the gate's evidence: the latest
// snapshot, read as an action's (WithActionRead), with its stored hash
// when the store keeps one (HashedStore).
func (s *Server) ledger() gate.Ledger {
	if hs, ok := s.store.(HashedStore); ok {
		return hashedLedger{storeLedger{s}, hs}
	}
	return storeLedger{s}
}

type storeLedger struct{ s *Server }

func (l storeLedger) Latest(ctx context.Context, pid string) (*warrant.View, error) {
	return l.s.snapshot(WithActionRead(ctx), pid, "")
}

type hashedLedger struct {
	storeLedger
	hs HashedStore
}

func (l hashedLedger) LatestHashed(ctx context.Context, pid string) (*warrant.View, string, error) {
	v, hash, err := l.hs.LatestHashed(WithActionRead(ctx), pid)
	if errors.Is(err, ErrNotFound) {
		return nil, "", missing(pid, "")
	}
	return v, hash, err
}

// gatedError is the refusal or failure of a call the gate was asked
// (gate.Decide, gate.Ground): the gate recorded it if it could, and
// frees the call's evaluation slot (gate.Request.Done). Every error a
// recorded tool returns after asking the gate is one; any other was met
// before it, while decoding.
type gatedError struct{ err error }

func (e *gatedError) Error() string { return e.err.Error() }
func (e *gatedError) Unwrap() error { return e.err }

// asked marks err, the gate's answer, as gatedError.
func asked(err error) error {
	if err == nil {
		return nil
	}
	return &gatedError{err}
}

type slotHeldKey struct{}

// slotDone is what the gate calls when the evaluation of ctx's call ends:
// the release of the slot runGated took for it; nil when the tool was
// called without one (directly, by a test or benchmark).
func (s *Server) slotDone(ctx context.Context) func() {
	if ctx.Value(slotHeldKey{}) == nil {
		return nil
	}
	return s.releaseSlot
}

// runGated runs a recorded tool: the gate decides, records and answers;
// a refusal met before the gate was asked (the arguments, a busy server)
// is recorded through gate.Refuse. The evaluation slot passes to the gate
// (gate.Request.Done), which holds it until its evaluation ends, maybe
// after the call was answered at its deadline.
func (s *Server) runGated(ctx context.Context, t *toolSpec, raw []byte, argErr error, start time.Time) (toolResult, error) {
	err := argErr
	if err == nil {
		err = s.acquireGated(ctx)
	}
	if err != nil {
		return s.refused(t, s.gate.Refuse(ctx, t.tool.Name, s.who(ctx), err))
	}
	out, err := s.guarded(context.WithValue(ctx, slotHeldKey{}, true), t, raw)
	var ge *gatedError
	if err == nil || errors.As(err, &ge) {
		if err != nil {
			err = ge.err
		}
	} else {
		s.release() // the gate was not asked
		if !isPanic(err) {
			err = s.gate.Refuse(ctx, t.tool.Name, s.who(ctx), s.timedOut(ctx, err, start))
		}
	}
	if err != nil && isPanic(err) {
		return toolResult{}, err
	}
	if err != nil {
		return s.refused(t, err)
	}
	return success(out)
}

// acquireGated takes an evaluation slot for a gated call, waiting for one
// at most until the gate's recording reserve before ctx's deadline, so a
// refusal for time is on record when it is answered. Under load most
// calls wait here, so the wait is a plain timer rather than a derived
// context (which allocates and registers with its parent). A slot taken
// is always the call's: the gate releases it (gate.Request.Done), even
// when the deadline passes as it is taken.
func (s *Server) acquireGated(ctx context.Context) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	default:
	}
	if s.decisions == nil {
		return s.acquire(ctx)
	}
	dl, _ := ctx.Deadline()
	t := time.NewTimer(time.Until(dl.Add(-s.gate.RecordReserve())))
	defer t.Stop()
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	return s.slotsBusy()
}

// refused is the answer to a call refused with err.
func (s *Server) refused(t *toolSpec, err error) (toolResult, error) {
	s.logRefusal(t.tool.Name, err)
	return failure(err), nil
}
