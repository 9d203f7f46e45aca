package gate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// Decide judges r, records the decision (a refusal too) and only then
// answers, with the decision_id it was recorded under. A refusal is an
// error: a *RecordedError naming its record when the gate keeps a log.
// In order it checks that the approval and key can be honoured (or
// answers a retry from the record), the clock skew, that each proposition
// is stored and a named view is the latest; then it asks every layer.
//
// The evaluation runs until ctx's deadline (Config.Timeout when ctx has
// none) less a reserve for recording a refusal for time, which is then
// on record when it is answered, at the deadline.
func (g *Gate) Decide(ctx context.Context, r Request) (Answer, error) {
	done := r.Done
	r.Done = nil
	if r.RiskPolicy == (warrant.RiskPolicy{}) {
		r.RiskPolicy = warrant.DefaultRiskPolicy()
	}
	if g.st == nil {
		runDone(done)
		return Answer{}, errNotNew
	}
	ctx, cancel := g.deadline(ctx)
	defer cancel()
	if err := r.bounded(); err != nil {
		runDone(done)
		return Answer{}, g.Refuse(ctx, g.toolOf(&r), r, err)
	}
	if g.st.cfg.Log == nil {
		if err := logOff(g.st.cfg.LogOff, r.ApprovalID != "", r.IdempotencyKey != ""); err != nil {
			runDone(done)
			return Answer{}, err
		}
	}
	start := time.Now()
	dr := g.begin(ctx, g.toolOf(&r), &r)
	defer dr.release()
	ectx, ecancel := g.evalContext(ctx, dr)
	defer ecancel()
	ans, err := bounded(g, ectx, dr, done, &r, (*Gate).mayAct)
	if err != nil {
		var p *PanicError
		if errors.As(err, &p) {
			return Answer{}, err
		}
		err = g.timedOut(ectx, err, start)
	}
	return g.finish(ctx, dr, &ans, err)
}

// Refuse records a refusal the entrance raised while decoding a call
// of tool (audit.ToolMayAct, audit.ToolCheckGrounding, audit.ToolCall),
// before it could make a Request: r holds what it knew of the caller
// (Agent, Caller). It returns the refusal as Decide would (a
// *RecordedError when recorded); without a log, err itself.
func (g *Gate) Refuse(ctx context.Context, tool string, r Request, err error) error {
	if g.st == nil || g.st.cfg.Log == nil {
		return err
	}
	ctx, cancel := g.deadline(ctx)
	defer cancel()
	dr := g.begin(ctx, tool, &r)
	if c := r.Call; c != nil && len(c.Name) <= MaxNameBytes {
		// What was called is on record even when it could not be judged.
		dr.d.ToolName, dr.d.ArgumentsHash = c.Name, sha256Hex(c.Arguments)
		dr.d.Arguments, dr.d.ArgumentsTruncated = capRecorded(c.Recorded)
	}
	_, err = g.finish(ctx, dr, nil, err)
	return err
}

// Bounds on what one Request may make the gate do and record: each
// further proposition is a ledger read and a layer in the record.
const (
	// MaxPropositions bounds Request.Propositions.
	MaxPropositions = 64
	// MaxNameBytes bounds a forwarded call's name (ToolCall.Name), which
	// every record of it keeps.
	MaxNameBytes = 256
)

// bounded refuses a request over the gate's bounds, naming the field.
func (r *Request) bounded() error {
	if n := len(r.Propositions); n > MaxPropositions {
		return refusal(warrant.CodeLimitExceeded, "propositions", "names %d propositions; a call relies on at most %d", n, MaxPropositions)
	}
	for i, pid := range r.Propositions {
		if pid == "" {
			return refusal(CodeInvalidArgument, "propositions["+strconv.Itoa(i)+"]", "is empty; name a stored proposition")
		}
	}
	if r.Call != nil && len(r.Call.Name) > MaxNameBytes {
		return refusal(warrant.CodeLimitExceeded, "name", "is %d bytes long; a tool's name is at most %d bytes", len(r.Call.Name), MaxNameBytes)
	}
	return nil
}

func runDone(done func()) {
	if done != nil {
		done()
	}
}

// toolOf is the tool r is recorded as.
func (g *Gate) toolOf(r *Request) string {
	if r.Call != nil {
		return audit.ToolCall
	}
	return audit.ToolMayAct
}

// deadline is ctx, given the gate's Timeout when it has no deadline.
func (g *Gate) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, g.st.cfg.Timeout)
}

// RecordReserve is the part of a decision's deadline kept for recording
// it: the evaluation is stopped that much before the deadline, so a
// refusal for time is on record when it is answered, at the deadline.
func (g *Gate) RecordReserve() time.Duration { return min(g.st.cfg.Timeout/5, time.Second) }

// evalContext is the context a call is evaluated on: ctx, or for a
// recorded call ctx ending RecordReserve before its deadline.
func (g *Gate) evalContext(ctx context.Context, dr *draft) (context.Context, context.CancelFunc) {
	if dr == nil {
		return ctx, func() {}
	}
	dl, _ := ctx.Deadline()
	return context.WithDeadline(ctx, dl.Add(-g.RecordReserve()))
}

// begin starts the decision of a call of tool; nil without a log.
func (g *Gate) begin(ctx context.Context, tool string, r *Request) *draft {
	if g.st.cfg.Log == nil {
		return nil
	}
	dr := &draft{d: audit.Decision{Tool: tool, Time: g.Now().UTC(), Caller: r.Caller,
		Agent: r.Agent.Name, AgentGroups: r.Agent.Groups}}
	if g.st.policyIDs != nil {
		dr.d.PolicyIDs, dr.d.PolicySetHash = g.st.policyIDs, g.st.cfg.PolicySetHash
	}
	return dr
}

// bounded runs eval and stops waiting for it at ctx's deadline: an
// evaluation cannot be interrupted, but its caller need not wait for it.
// The abandoned evaluation ends on its own, its result dropped; done is
// called when it ends.
//
// A recorded call's evaluation fills a draft of its own (draft.fork),
// handed over only with an answer in time: at the deadline the call keeps
// a snapshot of what was noted so far for its refusal's record, and the
// evaluation, which writes nothing anywhere (an approval is used only by
// the record of the decision it lifts), releases its idempotency key
// when it ends.
func bounded[R, T any](g *Gate, ctx context.Context, dr *draft, done func(), r R, eval func(*Gate, context.Context, R, *draft) (T, error)) (T, error) {
	type result struct {
		out T
		err error
	}
	var work *draft
	if dr != nil {
		work = dr.fork()
	}
	answered, abandon := make(chan result), make(chan struct{})
	go func() {
		defer runDone(done)
		out, err := guarded(g, ctx, r, work, eval)
		select {
		case answered <- result{out, err}:
		case <-abandon:
			work.release()
		}
	}()
	select {
	case a := <-answered:
		if dr != nil {
			dr.adopt(work)
		}
		return a.out, a.err
	case <-ctx.Done():
		close(abandon)
		if dr != nil {
			dr.snapshot(work)
		}
		var zero T
		return zero, ctx.Err()
	}
}

// guarded calls eval, turning a panic into a *PanicError.
func guarded[R, T any](g *Gate, ctx context.Context, r R, dr *draft, eval func(*Gate, context.Context, R, *draft) (T, error)) (out T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{fmt.Errorf("panic recovered in the gate: %v", r)}
			g.st.log.Error("the gate failed", "err", err)
		}
	}()
	return eval(g, ctx, r, dr)
}

// timedOut turns a failure caused by a deadline into the timeout
// refusal, which says which deadline ran out, after how long, and what
// raises it: the call's own (ctx's), or one of the store's (its connect
// or statement timeout), which can pass first.
func (g *Gate) timedOut(ctx context.Context, err error, start time.Time) error {
	var refused *warrant.Error
	own := errors.Is(ctx.Err(), context.DeadlineExceeded)
	timeout := g.st.cfg.Timeout
	if !own && errors.Is(err, context.DeadlineExceeded) {
		return refusal(CodeTimeout, "", "the store did not answer within its own time limit: the request gave up after %v, "+
			"before the server's %v per-request deadline. Retry; if it persists, ask the operator to check the store "+
			"(its connect_timeout or statement_timeout bounds each attempt)", time.Since(start).Round(time.Millisecond), timeout)
	}
	if !errors.Is(err, context.DeadlineExceeded) && (!own || errors.As(err, &refused)) {
		return err
	}
	return refusal(CodeTimeout, "", "the request took longer than the server's %v per-request deadline and was abandoned; "+
		"a write that timed out was not stored. Narrow the request, or ask the operator to raise ewp-mcp --request-timeout", timeout)
}

// logOff refuses the arguments that need the decision log, naming
// setting, how the log was turned off ("": DefaultLogOff, with ewp-mcp's
// words byte for byte).
func logOff(setting string, approval, key bool) error {
	remedy := "ask the operator to run ewp-mcp with its decision log"
	if setting == "" {
		setting = DefaultLogOff
	} else {
		remedy = "ask the operator to turn the decision log on"
	}
	if approval {
		return refusal(CodeApprovalsDisabled, "approval_id", "%s: this server runs without a decision log (%s), "+
			"so no approval can be checked; drop approval_id, or %s", ReasonApprovalsDisabled, setting, remedy)
	}
	if key {
		return refusal(CodeNoDecisionLog, "idempotency_key", "this server runs without a decision log (%s), "+
			"so no decision is kept to return on a retry; drop idempotency_key", setting)
	}
	return nil
}

// mayAct is the evaluation of r: dr is its draft (nil without a log).
func (g *Gate) mayAct(ctx context.Context, r *Request, dr *draft) (Answer, error) {
	primary, extra := r.propositions()
	if dr != nil {
		if replay, err := g.beginLogged(ctx, r, primary, dr); replay != nil || err != nil {
			return deref(replay), err
		}
	}
	now := g.Now()
	if err := r.checkSkew(now); err != nil {
		return Answer{}, err
	}
	ans := Answer{EvaluatedAt: now.UTC().Format(time.RFC3339Nano), Action: r.Action, RiskPolicy: r.RiskPolicy}
	in := Input{PropositionID: primary, Action: r.Action, ActionFields: r.ActionFields, Ingest: r.Ingest, Guard: r.Guard,
		Agent: r.Agent, Call: r.Call}
	first, err := g.warrantLayers(ctx, r, dr, primary, extra, &in, &ans)
	if err != nil {
		return Answer{}, err
	}
	layers := g.Layers
	if r.Call != nil {
		layers = g.st.callLayers
	}
	var d *audit.Decision
	if dr != nil {
		d = &dr.d
	}
	j, err := g.judge(ctx, layers, in, first, d)
	noteGraph(dr, r.Guard)
	if err == nil && dr != nil && r.Call != nil && j.Decision == warrant.RequireConfirmation && r.ApprovalID == "" {
		j, err = g.onceApproval(ctx, r, dr, j, now)
	}
	if err != nil {
		return Answer{}, err
	}
	if j.UsesOnce {
		dr.update(func(dr *draft) { dr.usesOnce = true })
	}
	ans.Layers, ans.Decision = j.Layers, j.Decision
	return ans, nil
}

// propositions are the proposition the answer and record name (primary,
// "" for none) and the further ones the warrant layer also judges.
func (r *Request) propositions() (primary string, extra []string) {
	if r.PropositionID == "" && len(r.Propositions) > 0 {
		return r.Propositions[0], r.Propositions[1:]
	}
	return r.PropositionID, r.Propositions
}

// checkSkew refuses an evaluated_at that did not decode, or that the
// gate refuses (CheckSkew).
func (r *Request) checkSkew(now time.Time) error {
	if r.Deferred.EvaluatedAt != nil {
		return r.Deferred.EvaluatedAt
	}
	return CheckSkew(r.EvaluatedAt, now)
}

// beginLogged notes the action in the decision, then answers a retry from
// the record: a non-nil replay is the decision an earlier call recorded
// under the same idempotency key.
func (g *Gate) beginLogged(ctx context.Context, r *Request, primary string, dr *draft) (*Answer, error) {
	g.noteAction(r, primary, dr)
	key := r.IdempotencyKey
	if key == "" {
		return nil, nil
	}
	unlock := g.st.keys.lock(dr.d.Caller.Credential + "\x00" + key)
	dr.update(func(dr *draft) { dr.d.IdempotencyKey, dr.unlock = key, unlock })
	prev, err := g.st.cfg.Log.ByIdempotencyKey(ctx, dr.d.Caller.Credential, key)
	if errors.Is(err, audit.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the decision log for idempotency_key %q: %w", key, err)
	}
	// A replay answers this call, so the call's evaluated_at is held to
	// the same clock as a fresh one's.
	if err := r.checkSkew(g.Now()); err != nil {
		return nil, err
	}
	return g.replayOf(ctx, dr, prev)
}

// noteAction records what the call asks about, as soon as the gate has
// it, so even a later refusal shows the proposition and the action.
func (g *Gate) noteAction(r *Request, pid string, dr *draft) {
	policy := g.st.policies.encoded(r.RiskPolicy)
	act, gc := r.Action, r.Guard
	var hash, tool string
	var args []byte
	var truncated bool
	switch {
	case r.Call != nil:
		tool, hash = r.Call.Name, sha256Hex(r.Call.Arguments)
		args, truncated = capRecorded(r.Call.Recorded)
	case gc != nil:
		tool = gc.Act.ToolName
		if gc.Act.Arguments != nil {
			hash = ArgumentsHash(gc.Act.Arguments)
			args, truncated = g.st.redact.recorded(gc.Act.Arguments)
		}
	}
	dr.update(func(dr *draft) {
		d := &dr.d
		d.PropositionID, d.ActionID, d.ActionKind, d.Risk = pid, act.ActionID, act.Kind, act.Risk
		d.Reversible, d.RiskPolicy, d.ApprovalID = &act.Reversible, policy, r.ApprovalID
		if gc != nil {
			d.Concepts, d.Cardinality, d.MinDepth = gc.Act.Concepts, gc.Act.Cardinality, gc.Act.MinDepth
		}
		if gc != nil || r.Call != nil {
			d.ToolName, d.ArgumentsHash, d.Arguments, d.ArgumentsTruncated = tool, hash, args, truncated
		}
	})
}

// warrantLayers is the EWP layer over the latest stored snapshot of each
// proposition; it fills in's warrant and the answer's warrant fields from
// the primary one. Without a proposition it is reported as skipped, never
// as a verdict.
func (g *Gate) warrantLayers(ctx context.Context, r *Request, dr *draft, primary string, extra []string, in *Input, ans *Answer) ([]LayerDecision, error) {
	if primary == "" {
		if r.ViewID != "" || r.Deferred.ViewID != nil {
			return nil, refusal(CodeInvalidArgument, "view_id", "names a snapshot of proposition_id; give proposition_id too, or drop view_id")
		}
		return []LayerDecision{SkippedWarrant()}, nil
	}
	if r.Deferred.ViewID != nil {
		return nil, r.Deferred.ViewID
	}
	latest, hash, err := g.latest(ctx, primary, dr != nil)
	if err == nil {
		err = CheckLatest(primary, r.ViewID, latest)
	}
	if err != nil {
		return nil, err
	}
	w, err := warrant.Evaluate(latest, ans.EvaluatedAt)
	if err != nil {
		return nil, err
	}
	in.Warrant = *Filled(w)
	g.noteView(dr, primary, latest, hash, in.Warrant.Warrant)
	ans.PropositionID, ans.ViewID, ans.Warrant = primary, latest.ViewID, in.Warrant.Warrant
	first, err := WarrantDecision(w.Warrant, in.Action, r.RiskPolicy)
	if err != nil || len(extra) == 0 {
		return []LayerDecision{first}, err
	}
	out := append(make([]LayerDecision, 0, 1+len(extra)), first)
	in.Propositions = append(make([]string, 0, 1+len(extra)), primary)
	for _, pid := range extra {
		l, err := g.furtherWarrant(ctx, pid, ans.EvaluatedAt, r)
		if err != nil {
			return nil, err
		}
		out, in.Propositions = append(out, l), append(in.Propositions, pid)
	}
	return out, nil
}

// WarrantDetail is the detail of the warrant layer of a further
// proposition (Request.Propositions): what it judged.
type WarrantDetail struct {
	PropositionID string       `json:"proposition_id"`
	ViewID        string       `json:"view_id"`
	Warrant       warrant.Axes `json:"warrant"`
}

// furtherWarrant is the warrant layer over proposition pid, one of
// r.Propositions.
func (g *Gate) furtherWarrant(ctx context.Context, pid, at string, r *Request) (LayerDecision, error) {
	latest, _, err := g.latest(ctx, pid, false)
	if err != nil {
		return LayerDecision{}, err
	}
	w, err := warrant.Evaluate(latest, at)
	if err != nil {
		return LayerDecision{}, err
	}
	l, err := WarrantDecision(w.Warrant, r.Action, r.RiskPolicy)
	l.Detail = WarrantDetail{PropositionID: pid, ViewID: latest.ViewID, Warrant: Filled(w).Warrant}
	return l, err
}

// errNoLedger refuses a proposition when the gate has no ledger.
var errNoLedger = refusal(warrant.CodeMissingView, "proposition_id", "this gate has no evidence ledger, so no proposition can be judged")

// latest is the latest snapshot of pid and, when hashed and the ledger
// keeps canonical hashes, the hash stored with it; "" otherwise.
func (g *Gate) latest(ctx context.Context, pid string, hashed bool) (*warrant.View, string, error) {
	l := g.st.cfg.Ledger
	if l == nil {
		return nil, "", errNoLedger
	}
	if hl, ok := l.(HashedLedger); ok && hashed {
		return hl.LatestHashed(ctx, pid)
	}
	v, err := l.Latest(ctx, pid)
	return v, "", err
}

// noteView records the snapshot the warrant layer judged, with the hash of
// its canonical form (EWP §8), and the warrant it gave. hash is the one
// the ledger keeps; when "", it is computed here.
func (g *Gate) noteView(dr *draft, pid string, v *warrant.View, hash string, axes warrant.Axes) {
	if dr == nil {
		return
	}
	if hash == "" {
		hash = g.st.hashes.viewHash(pid, v)
	}
	ax := AxesJSON(axes)
	dr.update(func(dr *draft) { dr.d.ViewID, dr.d.ViewHash, dr.axes = v.ViewID, hash, ax })
}

// noteGraph records the concept-graph version a call was judged on.
func noteGraph(dr *draft, gc *GuardCall) {
	if dr != nil && gc.Checked() {
		v := gc.GraphVersion()
		dr.update(func(dr *draft) { dr.d.GraphVersion = v })
	}
}
