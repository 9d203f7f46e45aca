package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/sqlite"
)

var ctx = context.Background()

var t0 = time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)

// clock is the log's fixed clock (the suite sets it in expiry cases).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func newLog(t testing.TB) (*sqlite.Log, *clock) {
	t.Helper()
	c := &clock{t: t0}
	l, err := sqlite.Create(filepath.Join(t.TempDir(), "ewp.db.audit"), sqlite.Options{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, c
}

// pendingDecision is a REQUIRE_CONFIRMATION may_act decision on prop.
func pendingDecision(prop string, i int) *audit.Decision {
	return &audit.Decision{
		Tool: audit.ToolMayAct, Outcome: audit.OutcomeRequireConfirmation,
		Caller:        audit.Caller{Transport: "stdio", Role: "evaluate", ClientName: "claude-code", Credential: "agent-1"},
		PropositionID: prop, ViewID: "v1", ViewHash: "9f86",
		ActionID: fmt.Sprintf("act-%d", i), ActionKind: "migrate", Risk: "high", Reversible: new(false),
		Concepts: []string{"database"}, ToolName: "psql", ArgumentsHash: "ab12",
		GraphVersion: 3, PolicyIDs: []string{"prod-writes"}, PolicySetHash: "cafe",
		Layers: []audit.Layer{{Layer: "warrant", Decision: "REQUIRE_CONFIRMATION", Reasons: []string{"risk high"}}},
	}
}

func record(t testing.TB, l *sqlite.Log, d *audit.Decision) *audit.Decision {
	t.Helper()
	if err := l.Record(ctx, d); err != nil {
		t.Fatalf("record: %v", err)
	}
	return d
}

func approveOnce(t testing.TB, l *sqlite.Log, decisionID string) *audit.Approval {
	t.Helper()
	a := &audit.Approval{DecisionID: decisionID, Verdict: audit.Approved, Approver: "ops", Once: true}
	if err := l.Approve(ctx, a); err != nil {
		t.Fatalf("approve: %v", err)
	}
	return a
}

func mustVerify(t testing.TB, l *sqlite.Log) sqlite.VerifyReport {
	t.Helper()
	rep, err := l.Verify(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	return rep
}

// sameDecision fails unless got reads back exactly as want, field for
// field (as JSON).
func sameDecision(t testing.TB, got, want *audit.Decision) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("decision reads back as\n%s\nwant\n%s", g, w)
	}
}
