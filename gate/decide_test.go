package gate

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/warrant"
)

// testNow is the gate's clock; approvals are signed at the real clock.
var testNow = time.Now().UTC().Truncate(time.Second)

// recording is a log that keeps the last decision given to it as given
// (memlog keeps only what its chain entries hold).
type recording struct {
	audit.Log
	last *audit.Decision
}

func (l *recording) Record(ctx context.Context, d *audit.Decision) error {
	c := *d
	l.last = &c
	return l.Log.Record(ctx, d)
}

// views is a Ledger over fixed snapshots.
type views map[string]*warrant.View

func (v views) Latest(_ context.Context, pid string) (*warrant.View, error) {
	if x, ok := v[pid]; ok {
		return x, nil
	}
	return nil, refusal(warrant.CodeMissingView, "proposition_id", "no stored snapshot of proposition %q", pid)
}

// tentative is a proposition asserted once by an agent turn: MAY_ACT for a
// low-risk action, REQUIRE_CONFIRMATION for a high-risk one.
func tentative(t testing.TB, pid string) *warrant.View {
	return viewOf(t, pid, "")
}

// viewOf is tentative with extra members.
func viewOf(t testing.TB, pid, extra string) *warrant.View {
	t.Helper()
	raw := `{"proposition_id":"` + pid + `","view_id":"v-` + pid + `",` + extra + `"assertions":[{"assertion_id":"a1",
		"text":"server01 runs Windows Server 2022","asserted_by":"agent","assertion_confidence":0.9,
		"asserted_at":"2026-09-01T00:00:00Z","source":{"source_id":"s1","lineage_id":"L-s1","origin_type":"turn",
		"origin_locator":"loc:s1","snapshot_id":"snap:s1","content_hash":"sha256:s1","observed_at":"2026-09-01T00:00:00Z"}}]}`
	v, err := warrant.DecodeView([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var alice = audittest.NewOperator("alice")

func newTestGate(t testing.TB, log audit.Log, ledger Ledger) *Gate {
	t.Helper()
	g, err := New(Config{Ledger: ledger, Log: log, OperatorKeys: alice.Keys, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func action(risk string, reversible bool) warrant.Action {
	return warrant.Action{ActionID: "act-1", Kind: "restart", Risk: risk, Reversible: reversible}
}

// Decide records the decision before it answers, under the decision_id
// the answer carries; a refusal is recorded too and names its record.
func TestDecideRecordsBeforeAnswering(t *testing.T) {
	log := &recording{Log: memlog.New(nil)}
	g := newTestGate(t, log, views{"P-1": tentative(t, "P-1")})
	ctx := context.Background()
	ans, err := g.Decide(ctx, Request{PropositionID: "P-1", Action: action("low", true), RiskPolicy: warrant.DefaultRiskPolicy()})
	if err != nil || ans.Decision != warrant.MayActDecision || ans.DecisionID == "" || ans.ViewID != "v-P-1" {
		t.Fatalf("Decide: %+v, %v", ans, err)
	}
	d, err := log.Decision(ctx, ans.DecisionID)
	if err != nil || d.Tool != audit.ToolMayAct || d.Outcome != audit.OutcomeMayAct || d.ViewHash == "" || d.Agent != "" {
		t.Fatalf("record: %+v, %v", d, err)
	}
	_, err = g.Decide(ctx, Request{PropositionID: "P-none", Action: action("low", true), RiskPolicy: warrant.DefaultRiskPolicy()})
	var rec *RecordedError
	if !errors.As(err, &rec) {
		t.Fatalf("a missing proposition: %v, want a recorded refusal", err)
	}
	if d, err := log.Decision(ctx, rec.ID); err != nil || d.Outcome != audit.OutcomeRefused || d.Code != warrant.CodeMissingView {
		t.Fatalf("refusal's record: %+v, %v", d, err)
	}
	err = g.Refuse(ctx, audit.ToolCheckGrounding, Request{Agent: audit.Principal{Name: "bob"}}, refusal(CodeInvalidArgument, "concepts", "is required"))
	if !errors.As(err, &rec) {
		t.Fatalf("Refuse: %v", err)
	}
	if d := log.last; d.ID != rec.ID || d.Tool != audit.ToolCheckGrounding || d.Agent != "bob" || d.Code != CodeInvalidArgument {
		t.Fatalf("Refuse's record: %+v", d)
	}
}

// Every further proposition is judged; the most restrictive wins and each
// is reported as a warrant layer naming what it judged.
func TestDecidePropositions(t *testing.T) {
	g := newTestGate(t, memlog.New(nil), views{"P-1": tentative(t, "P-1"), "P-2": viewOf(t, "P-2", `"degraded":true,`)})
	ans, err := g.Decide(context.Background(), Request{Propositions: []string{"P-1", "P-2"}, Action: action("low", true),
		RiskPolicy: warrant.DefaultRiskPolicy()})
	if err != nil || ans.PropositionID != "P-1" || len(ans.Layers) != 2 {
		t.Fatalf("Decide: %+v, %v", ans, err)
	}
	if det, ok := ans.Layers[1].Detail.(WarrantDetail); !ok || det.PropositionID != "P-2" || ans.Layers[1].Layer != WarrantLayerName {
		t.Errorf("second warrant layer: %+v", ans.Layers[1])
	}
	if ans.Layers[0].Decision != audit.VerdictMayAct || ans.Decision == warrant.MayActDecision ||
		audit.Verdict(ans.Decision) != ans.Layers[1].Decision {
		t.Errorf("decision %s over %+v, want the degraded proposition's", ans.Decision, ans.Layers)
	}
	for _, pids := range [][]string{{"P-1", ""}, {"", "P-1"}} {
		_, err = g.Decide(context.Background(), Request{Propositions: pids, Action: action("low", true),
			RiskPolicy: warrant.DefaultRiskPolicy()})
		var we *warrant.Error
		if !errors.As(err, &we) || !strings.HasPrefix(we.Field, "propositions[") {
			t.Errorf("an empty proposition id in %q: %v, want a refusal naming it", pids, err)
		}
	}
}

func toolCall(args string) *ToolCall {
	return &ToolCall{Entrance: "gateway", Name: "fs/write_file", Rule: "fs/*", Arguments: json.RawMessage(args),
		Recorded: json.RawMessage(args)}
}

// A forwarded call is recorded as tool_call with its name and arguments;
// the evidence layer holds an irreversible call without evidence and lets
// a reversible low-risk one through.
func TestDecideToolCall(t *testing.T) {
	log := &recording{Log: memlog.New(nil)}
	g := newTestGate(t, log, nil)
	ctx := context.Background()
	args := `{"path":"/tmp/a","content":"x"}`
	agent := audit.Principal{Name: "bot", Groups: []string{"ops"}}
	ans, err := g.Decide(ctx, Request{Agent: agent, Call: toolCall(args), Action: action("low", false), RiskPolicy: warrant.DefaultRiskPolicy()})
	if err != nil || ans.Decision != warrant.RequireConfirmation {
		t.Fatalf("an irreversible call without evidence: %+v, %v", ans, err)
	}
	ev := ans.Layers[1]
	if ev.Layer != EvidenceLayerName || ev.Decision != audit.VerdictRequireConfirmation || !strings.HasPrefix(ev.Reasons[0], ReasonNoEvidence+": ") {
		t.Errorf("evidence layer: %+v", ev)
	}
	d := log.last
	if d.ID != ans.DecisionID || d.Tool != audit.ToolCall || d.ToolName != "fs/write_file" || d.ArgumentsHash != sha256Hex([]byte(args)) ||
		string(d.Arguments) != args || d.Agent != "bot" || len(d.AgentGroups) != 1 {
		t.Fatalf("record: %+v", d)
	}
	ans, err = g.Decide(ctx, Request{Agent: agent, Call: toolCall(args), Action: action("low", true), RiskPolicy: warrant.DefaultRiskPolicy()})
	if err != nil || ans.Decision != warrant.MayActDecision {
		t.Fatalf("a low-risk reversible call: %+v, %v", ans, err)
	}
	big := `{"content":"` + strings.Repeat("y", MaxRecordedArgumentsBytes) + `"}`
	ans, _ = g.Decide(ctx, Request{Call: toolCall(big), Action: action("low", true), RiskPolicy: warrant.DefaultRiskPolicy()})
	if d := log.last; d.ID != ans.DecisionID || !d.ArgumentsTruncated || len(d.Arguments) > MaxRecordedArgumentsBytes+16 {
		t.Errorf("long arguments recorded uncut: %d bytes, truncated %v", len(d.Arguments), d.ArgumentsTruncated)
	}
}

// onceLog finds a once-approval for a call as audit.OnceApprovals does,
// over the approvals it was given.
type onceLog struct {
	*memlog.Log
	asked []string
}

func (l *onceLog) OnceApprovalFor(ctx context.Context, agent, tool, hash string, now time.Time) (*audit.Approval, error) {
	l.asked = append(l.asked, agent+" "+tool+" "+hash)
	ds, err := l.List(ctx, audit.Filter{})
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if d.ToolName != tool || d.ArgumentsHash != hash || d.Outcome != audit.OutcomeRequireConfirmation {
			continue
		}
		aps, err := l.ApprovalsFor(ctx, d.ID)
		if err != nil {
			return nil, err
		}
		for i := range aps {
			if aps[i].Once {
				if _, used := l.UsedBy(aps[i].ID); !used {
					return &aps[i], nil
				}
			}
		}
	}
	return nil, audit.ErrNotFound
}

// The operator's once-approval of a held call lets the same call through
// exactly once, without the agent presenting it; the next identical call
// is held again.
func TestDecideOnceApproval(t *testing.T) {
	log := &onceLog{Log: memlog.New(nil)}
	g := newTestGate(t, log, nil)
	ctx := context.Background()
	args := `{"path":"/etc/passwd"}`
	req := Request{Agent: audit.Principal{Name: "bot"}, Call: toolCall(args), Action: action("high", false), RiskPolicy: warrant.DefaultRiskPolicy()}
	held, err := g.Decide(ctx, req)
	if err != nil || held.Decision != warrant.RequireConfirmation {
		t.Fatalf("first call: %+v, %v", held, err)
	}
	if len(log.asked) != 1 || log.asked[0] != "bot fs/write_file "+sha256Hex([]byte(args)) {
		t.Fatalf("the gate asked the log %q", log.asked)
	}
	a := audit.Approval{ID: "ap-1", DecisionID: held.DecisionID, Approver: "alice", Verdict: audit.Approved, Once: true,
		Until: testNow.Add(time.Hour)}
	if err := alice.Approve(ctx, log, &a); err != nil {
		t.Fatal(err)
	}
	passed, err := g.Decide(ctx, req)
	if err != nil || passed.Decision != warrant.MayActDecision || passed.Layers[len(passed.Layers)-1].Layer != ApprovalLayerName {
		t.Fatalf("approved call: %+v, %v", passed, err)
	}
	if by, used := log.UsedBy("ap-1"); !used || by != passed.DecisionID {
		t.Errorf("approval used by %q (%v), want %s", by, used, passed.DecisionID)
	}
	again, err := g.Decide(ctx, req)
	if err != nil || again.Decision != warrant.RequireConfirmation {
		t.Fatalf("the call after: %+v, %v", again, err)
	}
	// A retry of the approved call under its idempotency key is answered
	// from the record, though it presented no approval.
	a2 := audit.Approval{ID: "ap-2", DecisionID: again.DecisionID, Approver: "alice", Verdict: audit.Approved, Once: true,
		Until: testNow.Add(time.Hour)}
	if err := alice.Approve(ctx, log, &a2); err != nil {
		t.Fatal(err)
	}
	req.IdempotencyKey, req.Caller.Credential = "k-once", "none"
	keyed, err := g.Decide(ctx, req)
	if err != nil || keyed.Decision != warrant.MayActDecision {
		t.Fatalf("keyed approved call: %+v, %v", keyed, err)
	}
	retry, err := g.Decide(ctx, req)
	if err != nil || !retry.Replayed || retry.DecisionID != keyed.DecisionID {
		t.Fatalf("its retry: %+v, %v; want the keyed decision replayed", retry, err)
	}
}

// RecordResult needs a log that keeps results; without a log it records
// nothing and says nothing.
func TestRecordResult(t *testing.T) {
	g := newTestGate(t, nil, nil)
	if err := g.RecordResult(context.Background(), audit.Result{DecisionID: "x", Status: audit.ResultOK}); err != nil {
		t.Errorf("without a log: %v", err)
	}
	g = newTestGate(t, plainLog{memlog.New(nil)}, nil)
	if err := g.RecordResult(context.Background(), audit.Result{DecisionID: "x", Status: audit.ResultOK}); !errors.Is(err, ErrNoResults) {
		t.Errorf("a log without results: %v, want ErrNoResults", err)
	}
}

// plainLog hides every method of the log but audit.Log's.
type plainLog struct{ audit.Log }

// A Gate literal has no state to decide with.
func TestDecideNeedsNew(t *testing.T) {
	called := false
	_, err := (&Gate{}).Decide(context.Background(), Request{Done: func() { called = true }})
	if !errors.Is(err, errNotNew) || !called {
		t.Errorf("err %v, done called %v", err, called)
	}
}

// slowLedger answers once release is closed.
type slowLedger struct {
	views
	release chan struct{}
}

func (l slowLedger) Latest(ctx context.Context, pid string) (*warrant.View, error) {
	<-l.release
	return l.views.Latest(ctx, pid)
}

// An evaluation past its deadline is answered EWP_REFUSE_TIMEOUT at the
// deadline, and that refusal is on record with what the call had noted
// (its proposition); the abandoned evaluation's slot is freed (Done)
// only when it ends.
func TestDecideDeadline(t *testing.T) {
	log := &recording{Log: memlog.New(nil)}
	l := slowLedger{views{"P-1": tentative(t, "P-1")}, make(chan struct{})}
	g, err := New(Config{Ledger: l, Log: log, Now: func() time.Time { return testNow }, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	ans, err := g.Decide(context.Background(), Request{PropositionID: "P-1", Action: action("low", true),
		RiskPolicy: warrant.DefaultRiskPolicy(), Done: func() { close(ended) }})
	var rec *RecordedError
	if !errors.As(err, &rec) || ans.DecisionID != "" {
		t.Fatalf("a stuck ledger: %+v, %v; want a recorded refusal", ans, err)
	}
	if code, _ := Explain(err); code != CodeTimeout {
		t.Errorf("code %s, want %s", code, CodeTimeout)
	}
	if d := log.last; d.ID != rec.ID || d.Code != CodeTimeout || d.PropositionID != "P-1" || d.ViewID != "" {
		t.Errorf("the timeout's record: %+v", d)
	}
	select {
	case <-ended:
		t.Fatal("Done was called while the evaluation still ran")
	default:
	}
	close(l.release)
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("Done was never called after the evaluation ended")
	}
}

// A retry under the same idempotency key is answered from the record; the
// key reused for another call is refused.
func TestDecideReplay(t *testing.T) {
	g := newTestGate(t, memlog.New(nil), views{"P-1": tentative(t, "P-1")})
	req := Request{PropositionID: "P-1", Action: action("low", true), RiskPolicy: warrant.DefaultRiskPolicy(),
		IdempotencyKey: "k-1", Caller: audit.Caller{Credential: "none"}}
	first, err := g.Decide(context.Background(), req)
	if err != nil || first.Replayed {
		t.Fatalf("first: %+v, %v", first, err)
	}
	again, err := g.Decide(context.Background(), req)
	if err != nil || !again.Replayed || again.DecisionID != first.DecisionID || again.Decision != first.Decision {
		t.Fatalf("retry: %+v, %v; want the first decision replayed", again, err)
	}
	req.Action.Kind = "delete"
	_, err = g.Decide(context.Background(), req)
	if code, _ := Explain(err); code != CodeIdempotencyKeyReused {
		t.Errorf("the key reused for another action: %v", err)
	}
}

// A layer that panics fails the call as the gate's own failure, not
// recorded as a decision.
func TestDecidePanic(t *testing.T) {
	log := &recording{Log: memlog.New(nil)}
	g, _ := New(Config{Log: log, Layers: []Layer{panicLayer{}}, Now: func() time.Time { return testNow }})
	_, err := g.Decide(context.Background(), Request{Call: toolCall(`{}`), Action: action("low", true), RiskPolicy: warrant.DefaultRiskPolicy()})
	var p *PanicError
	if !errors.As(err, &p) || log.last != nil {
		t.Errorf("a panicking layer: %v, recorded %+v", err, log.last)
	}
}

type panicLayer struct{}

func (panicLayer) Name() string                                         { return "panics" }
func (panicLayer) ActionKeys() []string                                 { return nil }
func (panicLayer) Decide(context.Context, Input) (LayerDecision, error) { panic("layer bug") }

// The evidence layer runs once for a tool call, whether the gate adds it
// or the configuration names it; the zero risk policy is the default.
func TestEvidenceLayerOnce(t *testing.T) {
	for _, layers := range [][]Layer{nil, {EvidenceLayer{}}} {
		g, _ := New(Config{Layers: layers, Now: func() time.Time { return testNow }})
		ans, err := g.Decide(context.Background(), Request{Call: toolCall(`{}`), Action: action("high", true)})
		if err != nil || len(ans.Layers) != 2 || ans.Layers[1].Layer != EvidenceLayerName {
			t.Fatalf("layers %v: %+v, %v", layers, ans, err)
		}
		if ans.RiskPolicy != warrant.DefaultRiskPolicy() {
			t.Errorf("judged under %+v, want the default policy", ans.RiskPolicy)
		}
		ans, err = g.Decide(context.Background(), Request{Action: action("high", true)})
		if err != nil || len(ans.Layers) != 1 || ans.Decision != warrant.Deny {
			t.Errorf("a may_act call no layer judged: %+v, %v; want DENY without the evidence layer", ans, err)
		}
	}
}

// A request over the gate's bounds is refused, on record, naming the
// field; a refusal of a tool call records what was called.
func TestDecideBounds(t *testing.T) {
	log := &recording{Log: memlog.New(nil)}
	g := newTestGate(t, log, views{})
	many := make([]string, MaxPropositions+1)
	for i := range many {
		many[i] = "P"
	}
	_, err := g.Decide(context.Background(), Request{Propositions: many, Call: toolCall(`{"a":1}`), Action: action("low", true)})
	var we *warrant.Error
	if !errors.As(err, &we) || we.Code != warrant.CodeLimitExceeded || we.Field != "propositions" {
		t.Fatalf("%d propositions: %v", len(many), err)
	}
	if d := log.last; d.Outcome != audit.OutcomeRefused || d.Tool != audit.ToolCall || d.ToolName != "fs/write_file" || string(d.Arguments) != `{"a":1}` {
		t.Errorf("record: %+v", d)
	}
	long := toolCall(`{}`)
	long.Name = strings.Repeat("n", MaxNameBytes+1)
	_, err = g.Decide(context.Background(), Request{Call: long, Action: action("low", true)})
	if !errors.As(err, &we) || we.Field != "name" || log.last.ToolName != "" {
		t.Errorf("a long name: %v, recorded %q", err, log.last.ToolName)
	}
	if _, err := g.Decide(context.Background(), Request{Propositions: many[:MaxPropositions], Action: action("low", true)}); errors.As(err, &we) && we.Code == warrant.CodeLimitExceeded {
		t.Errorf("%d propositions refused: %v", MaxPropositions, err)
	}
}

// Without a decision log, the refusals of what needs one name how the
// entrance turned it off: ewp-mcp's flag by default, the entrance's own
// setting when it gives one (the gateway's config key).
func TestLogOffNamesTheSetting(t *testing.T) {
	for _, c := range []struct{ setting, want string }{
		{"", "this server runs without a decision log (ewp-mcp --audit off), so no decision is kept to return on a retry; drop idempotency_key"},
		{`"audit": "off" in /etc/gw.json`, `this server runs without a decision log ("audit": "off" in /etc/gw.json), so no decision`},
	} {
		g, err := New(Config{LogOff: c.setting, Now: func() time.Time { return testNow }})
		if err != nil {
			t.Fatal(err)
		}
		_, err = g.Decide(context.Background(), Request{IdempotencyKey: "k", Call: toolCall(`{}`), Action: action("low", true)})
		var we *warrant.Error
		if !errors.As(err, &we) || we.Code != CodeNoDecisionLog || !strings.Contains(we.Rule, c.want) {
			t.Errorf("LogOff %q: %v, want %q", c.setting, err, c.want)
		}
		_, err = g.Decide(context.Background(), Request{ApprovalID: "ap", Call: toolCall(`{}`), Action: action("low", true)})
		if !errors.As(err, &we) || we.Code != CodeApprovalsDisabled || !strings.Contains(we.Rule, c.setting) {
			t.Errorf("LogOff %q, approval_id: %v", c.setting, err)
		}
	}
}
