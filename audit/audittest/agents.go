package audittest

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// agentCases are the suite's cases of agent identities, results,
// once-approval lookups and counters (audit/agents.go).
var agentCases = []struct {
	name string
	fn   func(*testing.T, Store)
}{
	{"AgentsAddListRevoke", agentsAddListRevoke},
	{"RevokedCredentialRefusedOnNextLookup", revokedCredentialRefused},
	{"DecisionAgentReadsBack", decisionAgentReadsBack},
	{"ApprovalBoundToAgent", approvalBoundToAgent},
	{"Results", results},
	{"OnceApprovalFor", onceApprovalFor},
	{"OnceApprovalRace", onceApprovalRace},
	{"Counters", counters},
	{"CountersConcurrent", countersConcurrent},
	{"PinnedAgentHead", pinnedAgentHead},
}

// NewAgent is an agent record with a fresh credential, and the
// credential.
func NewAgent(t testing.TB, name string, groups ...string) (*audit.AgentRecord, string) {
	t.Helper()
	cred, sum, err := audit.NewAgentCredential()
	if err != nil {
		t.Fatal(err)
	}
	return &audit.AgentRecord{Name: name, Groups: groups, CredentialSHA256: sum}, cred
}

func addAgent(t testing.TB, l Log, name string, groups ...string) string {
	t.Helper()
	r, cred := NewAgent(t, name, groups...)
	if err := l.AddAgent(ctx, r); err != nil {
		t.Fatalf("add agent %s: %v", name, err)
	}
	return cred
}

func agentsAddListRevoke(t *testing.T, s Store) {
	l, c := s.newLog(t)
	r, cred := NewAgent(t, "builder", "ci", "eu")
	r.Ingest = true
	if err := l.AddAgent(ctx, r); err != nil {
		t.Fatal(err)
	}
	addAgent(t, l, "alpha")
	got, err := l.AgentByCredential(ctx, audit.CredentialSHA256(cred))
	if err != nil || got.Name != "builder" || !slices.Equal(got.Groups, []string{"ci", "eu"}) || !got.Ingest ||
		!got.CreatedAt.Equal(t0) || !got.RevokedAt.IsZero() || got.CredentialSHA256 != audit.CredentialSHA256(cred) {
		t.Fatalf("by credential: %+v %v", got, err)
	}
	dup, _ := NewAgent(t, "builder")
	if err := l.AddAgent(ctx, dup); !errors.Is(err, audit.ErrAgentExists) {
		t.Errorf("a taken name: %v", err)
	}
	same := &audit.AgentRecord{Name: "other", CredentialSHA256: r.CredentialSHA256}
	if err := l.AddAgent(ctx, same); err == nil {
		t.Error("a second agent with the same credential was added")
	}
	bad, _ := NewAgent(t, "no spaces")
	if err := l.AddAgent(ctx, bad); !errors.Is(err, audit.ErrInvalidAgent) {
		t.Errorf("an invalid name: %v", err)
	}
	if _, err := l.AgentByCredential(ctx, audit.CredentialSHA256("ewp_agent_unknown")); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("an unknown credential: %v", err)
	}
	c.set(t0.Add(time.Hour))
	if err := l.RevokeAgent(ctx, "builder", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := l.RevokeAgent(ctx, "nobody", t0); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("revoke an unknown agent: %v", err)
	}
	list, err := l.ListAgents(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "alpha" || list[1].Name != "builder" ||
		!list[1].RevokedAt.Equal(t0.Add(time.Hour)) || !list[0].RevokedAt.IsZero() {
		t.Fatalf("list: %+v %v", list, err)
	}
	again, _ := NewAgent(t, "builder")
	if err := l.AddAgent(ctx, again); !errors.Is(err, audit.ErrAgentExists) {
		t.Errorf("a revoked name reused: %v", err)
	}
	ro := s.again(t, l, true)
	if err := ro.AddAgent(ctx, func() *audit.AgentRecord { r, _ := NewAgent(t, "ro"); return r }()); err == nil {
		t.Error("a read-only handle added an agent")
	}
	rep := mustVerify(t, l)
	if rep.Agents != 2 || rep.Revocations != 1 {
		t.Errorf("report %+v", rep)
	}
}

// revokedCredentialRefused: a revocation through one handle (the
// operator's) is seen by the very next lookup on another (a server's).
func revokedCredentialRefused(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	server := s.again(t, l, false)
	cred := addAgent(t, l, "builder")
	addAgent(t, l, "builder2")
	if err := l.RevokeAgent(ctx, "builder2", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := server.AgentByCredential(ctx, audit.CredentialSHA256(cred)); err != nil {
		t.Fatalf("revoking builder2 revoked builder: %v", err)
	}
	if err := l.RevokeAgent(ctx, "builder", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := server.AgentByCredential(ctx, audit.CredentialSHA256(cred)); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("a revoked credential: %v", err)
	}
}

func agentDecision(agent string, i int) *audit.Decision {
	d := PendingDecision("P-db", i)
	d.Agent, d.AgentGroups = agent, []string{"ci"}
	return d
}

func decisionAgentReadsBack(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	d := record(t, l, agentDecision("builder", 1))
	got, err := l.Decision(ctx, d.ID)
	if err != nil || got.Agent != "builder" || !slices.Equal(got.AgentGroups, []string{"ci"}) {
		t.Fatalf("read back: %+v %v", got, err)
	}
	plain := record(t, l, PendingDecision("P-db", 2))
	if got, err := l.Decision(ctx, plain.ID); err != nil || got.Agent != "" || got.AgentGroups != nil {
		t.Fatalf("a decision without agent: %+v %v", got, err)
	}
	mustVerify(t, l)
}

func approvalBoundToAgent(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	d := record(t, l, agentDecision("builder", 1))
	a := approveOnce(t, l, d.ID)
	back, err := l.Approval(ctx, a.ID)
	if err != nil || back.Agent != "builder" || back.AnyAgent {
		t.Fatalf("approval read back: %+v %v", back, err)
	}
	other := agentDecision("intruder", 1)
	if err := back.Covers(other, t0); !errors.Is(err, audit.ErrApprovalWrongAgent) || audit.CodeOf(err) != audit.CodeApprovalWrongAgent {
		t.Fatalf("presented by another agent: %v", err)
	}
	w := record(t, l, agentDecision("builder", 2))
	wide := &audit.Approval{DecisionID: w.ID, Verdict: audit.Approved, Approver: "ops", Once: true, AnyAgent: true}
	if err := l.Approve(ctx, wide); err != nil {
		t.Fatal(err)
	}
	if back, err := l.Approval(ctx, wide.ID); err != nil || back.Agent != "" || !back.AnyAgent || back.Covers(agentDecision("intruder", 2), t0) != nil {
		t.Fatalf("an approval for any agent: %+v %v", back, err)
	}
	x := record(t, l, agentDecision("builder", 3))
	bound := &audit.Approval{DecisionID: x.ID, Verdict: audit.Approved, Approver: "ops", Once: true, Agent: "intruder"}
	if err := l.Approve(ctx, bound); !errors.Is(err, audit.ErrApprovalWrongAgent) {
		t.Fatalf("an approval bound to another agent than the decision's: %v", err)
	}
	mustVerify(t, l)
}

func results(t *testing.T, s Store) {
	l, c := s.newLog(t)
	d := UsingDecision("", 1)
	d.ApprovalID, d.Layers = "", nil
	record(t, l, d)
	head, _ := l.Head(ctx)
	c.set(t0.Add(time.Second))
	r1 := &audit.Result{DecisionID: d.ID, Status: audit.ResultOK, SHA256: audit.CredentialSHA256("out")}
	if err := l.RecordResult(ctx, r1); err != nil {
		t.Fatal(err)
	}
	if after, _ := l.Head(ctx); after.Seq != head.Seq+1 {
		t.Fatalf("the result is not the next chain entry: %v then %v", head, after)
	}
	r2 := &audit.Result{DecisionID: d.ID, Time: t0.Add(2 * time.Second), Status: audit.ResultFailed, Message: "downstream \x1b[31mclosed"}
	if err := l.RecordResult(ctx, r2); err != nil {
		t.Fatal(err)
	}
	got, err := l.ResultsFor(ctx, d.ID)
	if err != nil || len(got) != 2 || got[0].Status != audit.ResultOK || !got[0].Time.Equal(t0.Add(time.Second)) ||
		got[0].SHA256 != r1.SHA256 || got[1].Message != r2.Message || got[1].Status != audit.ResultFailed {
		t.Fatalf("results: %+v %v", got, err)
	}
	if none, err := l.ResultsFor(ctx, "no-such"); err != nil || len(none) != 0 {
		t.Fatalf("results of no decision: %+v %v", none, err)
	}
	if err := l.RecordResult(ctx, &audit.Result{DecisionID: "no-such", Status: audit.ResultOK}); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("a result of no decision: %v", err)
	}
	if err := l.RecordResult(ctx, &audit.Result{DecisionID: d.ID, Status: "fine"}); !errors.Is(err, audit.ErrInvalidResult) {
		t.Errorf("an invalid status: %v", err)
	}
	if rep := mustVerify(t, l); rep.Results != 2 || rep.Decisions != 1 {
		t.Errorf("report %+v", rep)
	}
}

// onceCall is the REQUIRE_CONFIRMATION decision of agent calling tool
// with arguments hash h.
func onceCall(agent, tool, h string, i int) *audit.Decision {
	d := agentDecision(agent, i)
	d.ToolName, d.ArgumentsHash = tool, h
	return d
}

func onceApprovalFor(t *testing.T, s Store) {
	l, c := s.newLog(t)
	server := s.again(t, l, false)
	const tool, h = "fs/write_file", "aa11"
	if _, err := server.OnceApprovalFor(ctx, "builder", tool, h, t0); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("none yet: %v", err)
	}
	old := approveOnce(t, l, record(t, l, onceCall("builder", tool, h, 1)).ID)
	newer := approveOnce(t, l, record(t, l, onceCall("builder", tool, h, 2)).ID)
	approveOnce(t, l, record(t, l, onceCall("builder", tool, "bb22", 3)).ID)
	got, err := server.OnceApprovalFor(ctx, "builder", tool, h, t0)
	if err != nil || got.ID != newer.ID {
		t.Fatalf("the newest: %+v %v (want %s)", got, err, newer.ID)
	}
	for what, q := range map[string][3]string{
		"another agent":     {"intruder", tool, h},
		"another tool":      {"builder", "fs/read_file", h},
		"another arguments": {"builder", tool, "cc33"},
	} {
		if _, err := server.OnceApprovalFor(ctx, q[0], q[1], q[2], t0); !errors.Is(err, audit.ErrNotFound) {
			t.Errorf("%s: %v", what, err)
		}
	}
	use := onceCall("builder", tool, h, 2)
	use.Outcome, use.ApprovalID = audit.OutcomeMayAct, newer.ID
	if err := server.RecordUse(ctx, use); err != nil {
		t.Fatal(err)
	}
	if got, err := server.OnceApprovalFor(ctx, "builder", tool, h, t0); err != nil || got.ID != old.ID {
		t.Fatalf("after the newest was used: %+v %v (want %s)", got, err, old.ID)
	}
	// A scope approval and a rejection are never found; an approval for
	// any agent is found for every agent; an expired one is not.
	sd := record(t, l, onceCall("builder", "db/drop", h, 4))
	if err := l.Approve(ctx, &audit.Approval{DecisionID: sd.ID, Verdict: audit.Approved, Approver: "ops",
		Scope: &audit.Scope{PropositionID: "P-db", ToolName: "db/drop"}, Until: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	rd := record(t, l, onceCall("builder", "db/drop", h, 5))
	if err := l.Approve(ctx, &audit.Approval{DecisionID: rd.ID, Verdict: audit.Rejected, Approver: "ops", Note: "no"}); err != nil {
		t.Fatal(err)
	}
	if _, err := server.OnceApprovalFor(ctx, "builder", "db/drop", h, t0); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("a scope approval or a rejection was found: %v", err)
	}
	wd := record(t, l, onceCall("builder", "db/vacuum", h, 6))
	wide := &audit.Approval{DecisionID: wd.ID, Verdict: audit.Approved, Approver: "ops", Once: true, AnyAgent: true, Until: t0.Add(time.Minute)}
	if err := l.Approve(ctx, wide); err != nil {
		t.Fatal(err)
	}
	if got, err := server.OnceApprovalFor(ctx, "intruder", "db/vacuum", h, t0); err != nil || got.ID != wide.ID {
		t.Fatalf("any agent: %+v %v", got, err)
	}
	c.set(t0.Add(time.Minute))
	if _, err := server.OnceApprovalFor(ctx, "intruder", "db/vacuum", h, t0.Add(time.Minute)); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("an expired approval was found: %v", err)
	}
	mustVerify(t, l)
}

// onceApprovalRace: 16 callers on four handles look the approval up and
// use it at once, as 16 identical calls through the gate would: exactly
// one use is recorded.
func onceApprovalRace(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	handles := []Log{l, s.again(t, l, false), s.again(t, l, false), s.again(t, l, false)}
	const tool, h = "fs/write_file", "aa11"
	a := approveOnce(t, l, record(t, l, onceCall("builder", tool, h, 1)).ID)
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			lg := handles[i%len(handles)]
			found, err := lg.OnceApprovalFor(ctx, "builder", tool, h, t0)
			if err != nil {
				errs[i] = err
				return
			}
			d := onceCall("builder", tool, h, 1)
			d.Outcome, d.ApprovalID = audit.OutcomeMayAct, found.ID
			errs[i] = lg.RecordUse(ctx, d)
		})
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, audit.ErrApprovalUsed) && !errors.Is(err, audit.ErrNotFound):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d calls used the approval, want exactly 1", wins)
	}
	if u, err := l.UseOf(ctx, a.ID); err != nil || u == nil {
		t.Fatalf("use: %+v %v", u, err)
	}
	if rep := mustVerify(t, l); rep.Uses != 1 || rep.Decisions != 2 {
		t.Fatalf("report %+v", rep)
	}
}

func counters(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	w1, w2 := t0.Truncate(time.Minute), t0.Truncate(time.Minute).Add(time.Minute)
	for i, want := range []int64{1, 3, 3} {
		n := []int64{1, 2, 0}[i]
		if got, err := l.Add(ctx, "agent:builder:calls", w1, n); err != nil || got != want {
			t.Fatalf("add %d: %d %v, want %d", n, got, err, want)
		}
	}
	if got, err := l.Add(ctx, "agent:builder:calls", w2, 1); err != nil || got != 1 {
		t.Fatalf("another window: %d %v", got, err)
	}
	if got, err := l.Add(ctx, "group:ci:calls", w1, 5); err != nil || got != 5 {
		t.Fatalf("another key: %d %v", got, err)
	}
	if _, err := l.Add(ctx, "", w1, 1); err == nil {
		t.Error("an empty key was counted")
	}
	if _, err := l.Add(ctx, "k", w1, -1); err == nil {
		t.Error("a negative add was counted")
	}
	mustVerify(t, l) // counters are not chained: the log still verifies
}

// countersConcurrent: 16 callers on two handles (two replicas) add 1 ten
// times each: every count returned is distinct and the last is 160.
func countersConcurrent(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	handles := []Log{l, s.again(t, l, false)}
	const callers, each = 16, 10
	got := make([][]int64, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for range each {
				n, err := handles[i%2].Add(ctx, "agent:builder:calls", t0, 1)
				if err != nil {
					errs[i] = err
					return
				}
				got[i] = append(got[i], n)
			}
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	for i := range callers {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		for k, n := range got[i] {
			if seen[n] || (k > 0 && n <= got[i][k-1]) {
				t.Fatalf("count %d returned twice or not increasing: %v", n, got[i])
			}
			seen[n] = true
		}
	}
	if len(seen) != callers*each || !seen[callers*each] {
		t.Fatalf("%d distinct counts, want 1…%d", len(seen), callers*each)
	}
}

// PinnedAgentHead is the head of the history pinnedAgentHistory writes:
// an agent added, a decision made for it, the call's result, the agent
// revoked. Like PinnedHead it was computed once by a script independent
// of this code from audit/README.md ("The chain, format 1", the entries
// added with agent identities).
const PinnedAgentHead = "4:49ce32d0ea2ddadcb69db432de0778ed96ec1cee20bb0a427929e5bc16826a9d"

func pinnedAgentHead(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	r := &audit.AgentRecord{Name: "builder", Groups: []string{"ci"}, CredentialSHA256: audit.CredentialSHA256("ewp_agent_pinned")}
	if err := l.AddAgent(ctx, r); err != nil {
		t.Fatal(err)
	}
	d := pinned(1, audit.OutcomeMayAct, "act-1")
	d.Agent, d.AgentGroups = "builder", []string{"ci"}
	record(t, l, d)
	if err := l.RecordResult(ctx, &audit.Result{DecisionID: d.ID, Time: T0.Add(time.Second), Status: audit.ResultOK,
		SHA256: audit.CredentialSHA256("result")}); err != nil {
		t.Fatal(err)
	}
	if err := l.RevokeAgent(ctx, "builder", T0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if h, err := l.Head(ctx); err != nil || h.String() != PinnedAgentHead {
		t.Fatalf("head %s (%v), want %s", h, err, PinnedAgentHead)
	}
	if rep := mustVerify(t, l); rep.Head.String() != PinnedAgentHead {
		t.Fatalf("verify reached %s", rep.Head)
	}
}
