// Package audittest is the decision log's test suite, run against every
// store (one suite, two stores): a store's tests call [Run] with a way to
// make a fresh log and to open more handles on it, and every rule the
// audit.Log promises is checked the same way on SQLite and PostgreSQL.
// Store-specific checks (SQL plans, tampering with raw SQL, killing a
// process) stay with each store.
package audittest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

// Log is what the suite needs of a store: the audit.Log and the
// store-neutral extras both stores have.
type Log interface {
	audit.Log
	audit.Agents
	audit.Results
	audit.OnceApprovals
	audit.Counters
	Each(ctx context.Context, q auditchain.Query, fn func(*audit.Decision) error) error
	UseOf(ctx context.Context, approvalID string) (*auditchain.Use, error)
	Verify(ctx context.Context) (auditchain.VerifyReport, error)
	VerifyHead(ctx context.Context, want audit.Head) (auditchain.VerifyReport, error)
	CommitStats() (commits, writes int64)
}

// Store makes logs for the suite.
type Store struct {
	// New makes a fresh, empty, writable log whose clock is now, closed
	// when t ends, and returns it with a function that opens another
	// handle on the same store (as another process or replica would),
	// read-only when asked; each handle is closed when t ends.
	New func(t testing.TB, now func() time.Time) (Log, func(t testing.TB, readOnly bool) Log)
	// FailUses makes every write of an approval's use to l's store fail
	// as a full disk would, until restore is called; nil for a store with
	// no storage that can fail (memlog), which skips that one case.
	FailUses func(t testing.TB, l Log) (restore func())

	mu     *sync.Mutex
	reopen map[Log]func(t testing.TB, readOnly bool) Log
}

// Run runs every case of the suite against the store.
func Run(t *testing.T, s Store) {
	s.mu, s.reopen = &sync.Mutex{}, map[Log]func(testing.TB, bool) Log{}
	cases := []struct {
		name string
		fn   func(*testing.T, Store)
	}{
		{"RecordFillsIDAndTimeAndReadsBack", recordFillsIDAndTimeAndReadsBack},
		{"RecordRefusesWhatNoCallProduces", recordRefusesWhatNoCallProduces},
		{"ListFiltersAndPages", listFiltersAndPages},
		{"ListDefaultLimit", listDefaultLimit},
		{"ListByTimeWindow", listByTimeWindow},
		{"FollowingNeverSkipsALateRecord", followingNeverSkipsALateRecord},
		{"ApproveChecksTheDecision", approveChecksTheDecision},
		{"Consume", consume},
		{"ConsumeRace", consumeRace},
		{"IdempotencyKey", idempotencyKey},
		{"ConcurrentRecordsChain", concurrentRecordsChain},
		{"CloseCommitsQueuedWrites", closeCommitsQueuedWrites},
		{"GroupCommitSharesCommits", groupCommitSharesCommits},
		{"InvalidUTF8Ids", invalidUTF8Ids},
		{"BatchRefusesOnlyTheDuplicate", batchRefusesOnlyTheDuplicate},
		{"PendingRetries", pendingRetries},
		{"ScopeBounds", scopeBounds},
		{"SignedApprovalReadsBackSigned", signedApprovalReadsBackSigned},
		{"PinnedHead", pinnedHead},
		{"SameHistorySameHead", sameHistorySameHead},
	}
	cases = append(cases, agentCases...)
	if s.FailUses != nil {
		cases = append(cases, struct {
			name string
			fn   func(*testing.T, Store)
		}{"UseFailsWithItsDecision", useFailsWithItsDecision})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, s) })
	}
}

var ctx = context.Background()

// T0 is the suite's clock at the start of every case.
var T0 = time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)

var t0 = T0

// clock is a settable clock for expiry tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (s Store) newLog(t testing.TB) (Log, *clock) {
	t.Helper()
	c := &clock{t: t0}
	l, reopen := s.New(t, c.now)
	s.mu.Lock()
	s.reopen[l] = reopen
	s.mu.Unlock()
	return l, c
}

// again opens another handle on l's store.
func (s Store) again(t testing.TB, l Log, readOnly bool) Log {
	t.Helper()
	s.mu.Lock()
	reopen := s.reopen[l]
	s.mu.Unlock()
	return reopen(t, readOnly)
}

// PendingDecision is a REQUIRE_CONFIRMATION may_act decision on prop.
func PendingDecision(prop string, i int) *audit.Decision {
	return &audit.Decision{
		Tool: audit.ToolMayAct, Outcome: audit.OutcomeRequireConfirmation,
		Caller:        audit.Caller{Transport: "stdio", Role: "evaluate", ClientName: "claude-code", Credential: "agent-1"},
		PropositionID: prop, ViewID: "v1", ViewHash: "9f86",
		ActionID: fmt.Sprintf("act-%d", i), ActionKind: "migrate", Risk: "high", Reversible: new(false),
		Concepts: []string{"database"}, ToolName: "psql", ArgumentsHash: "ab12",
		Arguments:    json.RawMessage(`{"command":"ALTER TABLE orders \u003c…","password":"[redacted]"}`),
		GraphVersion: 3, PolicyIDs: []string{"prod-writes"}, PolicySetHash: "cafe",
		Layers: []audit.Layer{{Layer: "warrant", Decision: "REQUIRE_CONFIRMATION", Reasons: []string{"risk high"}}},
	}
}

// BenchDecision is a may_act decision of the size the gate records:
// every layer with its reasons, the caller, the policy set.
func BenchDecision(i int) *audit.Decision {
	d := PendingDecision("P-bench", i)
	d.Caller.RemoteAddr = "127.0.0.1:53211"
	d.Caller.ClientVersion = "1.0.0"
	d.Layers = []audit.Layer{
		{Layer: "evidence", Decision: "MAY_ACT", Reasons: []string{"ACCEPTED, EXTERNAL verification, 2 lineages"}},
		{Layer: "policy", Decision: "REQUIRE_CONFIRMATION", Reasons: []string{"prod-writes: irreversible action in production"}},
		{Layer: "grounding", Decision: "MAY_ACT", Reasons: []string{"database: justified at D2"}},
	}
	d.RiskPolicy = map[string]any{"low": "MAY_ACT", "medium": "MAY_ACT", "high": "REQUIRE_CONFIRMATION"}
	return d
}

// BenchAllowed is BenchDecision answered MAY_ACT: what the gate records
// most, and in the SQLite log the decision that needs no row of its own.
func BenchAllowed(i int) *audit.Decision {
	d := BenchDecision(i)
	d.Outcome = audit.OutcomeMayAct
	for k := range d.Layers {
		d.Layers[k].Decision = audit.VerdictMayAct
	}
	return d
}

var pendingDecision = PendingDecision

func record(t testing.TB, l audit.Log, d *audit.Decision) *audit.Decision {
	t.Helper()
	if err := l.Record(ctx, d); err != nil {
		t.Fatalf("record: %v", err)
	}
	return d
}

func approveOnce(t testing.TB, l audit.Log, decisionID string) *audit.Approval {
	t.Helper()
	a := &audit.Approval{DecisionID: decisionID, Verdict: audit.Approved, Approver: "ops", Once: true}
	if err := l.Approve(ctx, a); err != nil {
		t.Fatalf("approve: %v", err)
	}
	return a
}

// MustVerify fails t unless the log verifies.
func MustVerify(t testing.TB, l Log) auditchain.VerifyReport {
	t.Helper()
	rep, err := l.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	return rep
}

var mustVerify = MustVerify

// waitUntil polls cond until it holds, failing t if it does not within
// 30 s: a test waits for a state it can name, not for a while.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
