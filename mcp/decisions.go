package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

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

	redact   redactor
	keys     *keyLocks
	hashes   *viewHashes
	policies *riskPolicies
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
			d.keys, d.hashes, d.policies = &keyLocks{}, &viewHashes{}, &riskPolicies{}
			d.redact = newRedactor(d.RedactArguments)
			s.decisions = &d
		}
	}
}

// recordedTools are the calls that are decisions.
var recordedTools = map[string]bool{audit.ToolMayAct: true, audit.ToolCheckGrounding: true}

// draft is a decision being made: the tool fills it in as it learns what
// it judges, and finishRecord records it with the outcome.
//
// An evaluation that may be abandoned at its deadline (bounded) fills a
// draft of its own (fork) and hands it over only when it answers in time
// (adopt); at the deadline the call records a copy taken under mu
// (snapshot), so what the evaluation writes afterwards reaches no record.
// Every write of the evaluation goes through update.
type draft struct {
	// mu guards the fields an evaluation writes against snapshot.
	mu sync.Mutex
	d  audit.Decision
	// axes is the warrant the warrant layer judged; the record keeps it as
	// that layer's detail so a replay can answer with it.
	axes any
	// replay is set when the call answered an earlier decision under its
	// idempotency key: nothing new is recorded.
	replay bool
	// unlock releases the call's idempotency key (see keyLocks); nil when
	// it holds none.
	unlock func()
	// policies encodes the risk policy the call is judged under.
	policies *riskPolicies
	// redact is how the action's arguments are recorded.
	redact redactor
	// usesOnce: the single-use approval d.ApprovalID lifts the decision,
	// which is then recorded together with the approval's use
	// (audit.Log.RecordUse) if it is MAY_ACT.
	usesOnce bool
	// out is the answer the decision was filled from (fill).
	out any
}

// update applies fn to the draft under its lock: the evaluation's writes.
func (dr *draft) update(fn func(*draft)) {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	fn(dr)
}

// fork is a draft for an evaluation that may be abandoned: what dr holds
// so far, written by the evaluation alone.
func (dr *draft) fork() *draft {
	return &draft{d: dr.d, policies: dr.policies, redact: dr.redact}
}

// adopt takes over what the evaluation of work found once it answered:
// work is no longer written, and its idempotency key's lock passes to dr.
func (dr *draft) adopt(work *draft) {
	dr.d, dr.axes, dr.replay, dr.usesOnce = work.d, work.axes, work.replay, work.usesOnce
	dr.unlock, work.unlock = work.unlock, nil
}

// snapshot takes what the abandoned evaluation of work had noted of its
// call (the proposition, the action, the view), for the timeout refusal's
// record; work keeps its key's lock, which the evaluation releases when
// it ends.
func (dr *draft) snapshot(work *draft) {
	work.mu.Lock()
	defer work.mu.Unlock()
	dr.d, dr.axes = work.d, work.axes
}

// release ends the call's hold on its idempotency key, if any. run defers
// it, so a key is released even when the tool panics.
func (dr *draft) release() {
	if dr != nil && dr.unlock != nil {
		dr.unlock()
		dr.unlock = nil
	}
}

// keyLocks serialises the calls of one idempotency key within the server,
// from the look-up until the decision is recorded. Without it two
// concurrent retries could both decide; the log's unique key makes one of
// them answer the other's decision, and the loser would be decided
// twice.
type keyLocks struct {
	mu   sync.Mutex
	held map[string]*keyLock
}

type keyLock struct {
	mu      sync.Mutex
	waiters int
}

// lock takes key's lock and returns its release.
func (k *keyLocks) lock(key string) func() {
	k.mu.Lock()
	if k.held == nil {
		k.held = map[string]*keyLock{}
	}
	l := k.held[key]
	if l == nil {
		l = &keyLock{}
		k.held[key] = l
	}
	l.waiters++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		if l.waiters--; l.waiters == 0 {
			delete(k.held, key)
		}
		k.mu.Unlock()
	}
}

type draftKey struct{}

// draftFrom is the decision ctx's call is making; nil without a log.
func draftFrom(ctx context.Context) *draft {
	d, _ := ctx.Value(draftKey{}).(*draft)
	return d
}

// beginRecord starts the decision of a recorded tool's call; ctx and nil
// for anything else or without a log.
func (s *Server) beginRecord(ctx context.Context, t *toolSpec) (context.Context, *draft) {
	if s.decisions == nil || !recordedTools[t.tool.Name] {
		return ctx, nil
	}
	dr := &draft{d: audit.Decision{Tool: t.tool.Name, Time: s.now().UTC(), Caller: callerFrom(ctx)},
		policies: s.decisions.policies, redact: s.decisions.redact}
	dr.d.Agent, dr.d.AgentGroups = recordedAgent(ctx)
	if s.guard != nil && s.guard.Policies() != nil {
		dr.d.PolicyIDs, dr.d.PolicySetHash = s.guard.Policies().IDs(), s.decisions.PolicySetHash
	}
	return context.WithValue(ctx, draftKey{}, dr), dr
}

// takeID gives the decision its decision_id unless it has one. It is
// taken as late as possible, just before the decision is recorded: the
// SQLite log finds a decision whose id is greater than every id recorded
// before it without a row of its own (audit/sqlite, schema version 3), so
// ids taken in recording order keep nearly every decision off that path.
func (dr *draft) takeID() error {
	if dr.d.ID != "" {
		return nil
	}
	id, err := uuid.NewV7()
	if err != nil {
		return errors.New("no decision_id could be generated (the system's random source failed), so the call is not answered")
	}
	dr.d.ID = id.String()
	return nil
}

// finishRecord records the call's decision (out, or the refusal err) and
// only then lets the answer go, with its decision_id. A decision that
// cannot be recorded is not answered: the call fails with
// EWP_INTERNAL_ERROR.
func (s *Server) finishRecord(ctx context.Context, dr *draft, out any, err error) (any, error) {
	if dr == nil || dr.replay {
		return out, err
	}
	d := &dr.d
	if err := dr.takeID(); err != nil {
		return nil, err
	}
	if err != nil {
		te := asToolError(err)
		// A refusal does not bind the idempotency key: the retry that
		// fixes the arguments is decided afresh.
		d.Outcome, d.Code, d.Message, d.IdempotencyKey = audit.OutcomeRefused, te.Error, recordedMessage(te.Message), ""
	} else {
		dr.fill(out)
	}
	rerr := s.record(ctx, dr)
	if errors.Is(rerr, context.DeadlineExceeded) {
		// The log gave the record up at a deadline (the call's, or the
		// batch's, which ends with it), having written nothing.
		return nil, s.recordLate(dr)
	}
	if errors.Is(rerr, audit.ErrDuplicateKey) && d.IdempotencyKey != "" {
		// A concurrent retry with the same key was recorded first: answer
		// as it was answered.
		return s.replayKey(ctx, dr)
	}
	if rerr != nil && s.decisions.Unavailable != nil && s.decisions.Unavailable(rerr) {
		return nil, fmt.Errorf("%w: recording decision %s in the decision log failed, so it is not answered: %w",
			ErrStoreUnavailable, d.ID, rerr)
	}
	if rerr != nil {
		return nil, fmt.Errorf("recording decision %s in the decision log failed, so it is not answered "+
			"(the operator must check the log's storage): %w", d.ID, rerr)
	}
	if err != nil {
		return nil, &recordedError{err: err, id: d.ID} // the refusal names its record too
	}
	return withDecisionID(out, d.ID), nil
}

// record records the finished decision: with its approval's use, in one
// transaction, when a single-use approval lifted it to MAY_ACT. When the
// log refuses the use (another call used the approval first, or it
// expired meanwhile), nothing was recorded and the call is decided again
// without the approval (unlift), and that decision is recorded.
func (s *Server) record(ctx context.Context, dr *draft) error {
	d := &dr.d
	if !dr.usesOnce || d.Outcome != audit.OutcomeMayAct {
		return s.decisions.Log.Record(ctx, d)
	}
	err := s.decisions.Log.RecordUse(ctx, d)
	if err == nil {
		return nil
	}
	why, refused := gate.RefusedReason(d.ApprovalID, err)
	if !refused {
		return err
	}
	dr.fill(unlift(dr.out, why))
	return s.decisions.Log.Record(ctx, d)
}

// unlift is may_act's answer out decided again without the approval that
// lifted it, for the reason why: the approval layer (always the last)
// keeps the gate's REQUIRE_CONFIRMATION, which is the call's decision (an
// approval lifts nothing else).
func unlift(out any, why string) any {
	o := out.(mayActAnswer)
	o.Decision = gate.Unlift(o.Layers, why)
	return o
}

// recordLate answers a call whose decision the log gave up at a deadline,
// having written nothing of it (a frozen or stuck store: GroupCommit
// gives up a write still queued, and a batch fails at its submitters'
// deadline): with
// EWP_REFUSE_TIMEOUT, at the deadline, which grants nothing. The refusal
// is then recorded under the decision's id as soon as the log takes it
// (within recordGrace); a failure to is logged.
func (s *Server) recordLate(dr *draft) error {
	refusal := refuse(CodeTimeout, "", "the decision log did not take this call's decision within the server's %v per-request deadline, "+
		"so it is not answered: do not act, and retry later. The refusal is recorded as decision %s once the log takes it; "+
		"if this persists, ask the operator to check the decision log's storage", s.timeout, dr.d.ID)
	te := asToolError(refusal)
	d := dr.d
	d.Outcome, d.Code, d.Message, d.IdempotencyKey = audit.OutcomeRefused, te.Error, te.Message, ""
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), recordGrace)
		defer cancel()
		if err := s.decisions.Log.Record(ctx, &d); err != nil {
			s.log.Error("a call answered at its deadline could not have its refusal recorded", "decision_id", d.ID, "err", err)
		}
	}()
	return refusal
}

// fill completes the decision from a tool's answer.
func (dr *draft) fill(out any) {
	dr.out = out
	switch o := out.(type) {
	case mayActAnswer:
		dr.d.Outcome = audit.Outcome(o.Decision)
		if t, err := time.Parse(timeLayout, o.EvaluatedAt); err == nil {
			dr.d.Time = t // the instant the gate decided at, to the digit
		}
		dr.d.Layers = make([]audit.Layer, len(o.Layers))
		for i, l := range o.Layers {
			dr.d.Layers[i] = audit.Layer(l)
			if l.Layer == gate.WarrantLayerName && l.Detail == nil && dr.axes != nil {
				dr.d.Layers[i].Detail = dr.axes
			}
		}
	case groundingOutput:
		// The concepts as the graph names them (as sent when unknown).
		dr.d.Outcome, dr.d.GraphVersion, dr.d.Concepts = audit.OutcomeAnswered, o.GraphVersion, o.Resolved
		l := audit.Layer{Layer: gate.GroundingLayerName, Decision: "GROUNDED", Reasons: []string{},
			Detail: gate.GroundingDetail{Grounded: o.Grounded, Resolved: o.Resolved, Gaps: o.Gaps, GraphVersion: o.GraphVersion}}
		if !o.Grounded {
			l.Decision = "NOT_GROUNDED"
			for _, g := range o.Gaps {
				l.Reasons = append(l.Reasons, g.Message)
			}
		}
		dr.d.Layers = []audit.Layer{l}
	}
}

// withDecisionID adds the decision_id to an answer.
func withDecisionID(out any, id string) any {
	switch o := out.(type) {
	case mayActAnswer:
		o.DecisionID = id
	case groundingOutput:
		o.DecisionID = id
		return o
	}
	return out
}

// noteAction records what a may_act call asks about, as soon as it is
// decoded, so even a later refusal shows the proposition and the action.
func noteAction(ctx context.Context, pid string, act warrant.Action, gc *gate.GuardCall, p warrant.RiskPolicy) {
	dr := draftFrom(ctx)
	if dr == nil {
		return
	}
	policy := dr.policies.encoded(p)
	var hash string
	var args json.RawMessage
	var truncated bool
	if gc != nil && gc.Act.Arguments != nil {
		hash = argumentsHash(gc.Act.Arguments)
		args, truncated = dr.redact.recorded(gc.Act.Arguments)
	}
	dr.update(func(dr *draft) {
		d := &dr.d
		d.PropositionID, d.ActionID, d.ActionKind, d.Risk = pid, act.ActionID, act.Kind, act.Risk
		d.Reversible, d.RiskPolicy = ptr(act.Reversible), policy
		if gc != nil {
			d.Concepts, d.ToolName, d.ArgumentsHash = gc.Act.Concepts, gc.Act.ToolName, hash
			d.Cardinality, d.MinDepth = gc.Act.Cardinality, gc.Act.MinDepth
			d.Arguments, d.ArgumentsTruncated = args, truncated
		}
	})
}

// noteView records the snapshot the warrant layer judged, with the hash of
// its canonical form (EWP §8), and the warrant it gave. hash is the one
// the store keeps (HashedStore); when "", it is computed here.
func (s *Server) noteView(ctx context.Context, pid string, v *warrant.View, hash string, axes warrant.Axes) {
	if dr := draftFrom(ctx); dr != nil {
		if hash == "" {
			hash = s.decisions.hashes.viewHash(pid, v)
		}
		ax := axesJSON(axes)
		dr.update(func(dr *draft) { dr.d.ViewID, dr.d.ViewHash, dr.axes = v.ViewID, hash, ax })
	}
}

// viewHashes caches the canonical hash of the snapshots judged. A Store
// keeps a snapshot immutable under its (proposition_id, view_id) (see
// Store), so the hash of one is computed once instead of re-serialising
// the view on every call — a tenth of may_act's work otherwise. The cache
// is bounded: when full it starts over.
type viewHashes struct {
	mu sync.Mutex
	m  map[string]string
}

const viewHashesMax = 4096

func (c *viewHashes) viewHash(pid string, v *warrant.View) string {
	key := pid + "\x00" + v.ViewID
	c.mu.Lock()
	h, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return h
	}
	sum := sha256.Sum256(warrant.Canonical(v))
	h = hex.EncodeToString(sum[:])
	c.mu.Lock()
	if c.m == nil || len(c.m) >= viewHashesMax {
		c.m = make(map[string]string)
	}
	c.m[key] = h
	c.mu.Unlock()
	return h
}

// noteGraph records the concept-graph version a call was judged on.
func noteGraph(ctx context.Context, gc *gate.GuardCall) {
	if dr := draftFrom(ctx); dr != nil && gc.Checked() {
		v := gc.GraphVersion()
		dr.update(func(dr *draft) { dr.d.GraphVersion = v })
	}
}

// argumentsHash is the sha256 (hex) of action.arguments as canonical JSON:
// object keys sorted, no insignificant whitespace, numbers exactly as
// sent, no HTML escaping. Two calls with the same arguments hash alike
// however their keys were ordered.
func argumentsHash(args map[string]any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(args) // decoded from JSON with UseNumber: always encodable
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return hex.EncodeToString(sum[:])
}
