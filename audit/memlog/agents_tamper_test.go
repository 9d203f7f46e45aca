package memlog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

// TestAgentTablesTamper: an edited agent, a deleted revocation, an edited
// result and a dropped once-approval key are each found by Verify.
func TestAgentTablesTamper(t *testing.T) {
	ctx := context.Background()
	build := func(t *testing.T) *Log {
		t0 := time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)
		l := New(func() time.Time { return t0 })
		r := &audit.AgentRecord{Name: "builder", CredentialSHA256: audit.CredentialSHA256("c")}
		d := &audit.Decision{Tool: audit.ToolMayAct, Outcome: audit.OutcomeRequireConfirmation, PropositionID: "P",
			ToolName: "fs/write_file", ArgumentsHash: "aa"}
		a := &audit.Approval{Verdict: audit.Approved, Approver: "ops", Once: true}
		for _, err := range []error{l.AddAgent(ctx, r), l.RevokeAgent(ctx, "builder", t0), l.Record(ctx, d),
			l.RecordResult(ctx, &audit.Result{DecisionID: d.ID, Status: audit.ResultOK}),
			func() error { a.DecisionID = d.ID; return l.Approve(ctx, a) }()} {
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.Verify(ctx); err != nil {
			t.Fatal(err)
		}
		return l
	}
	edits := map[string]func(l *Log){
		"agent body":        func(l *Log) { l.agents[0].Body = append([]byte(nil), `{"name":"admin"}`...) },
		"agent credential":  func(l *Log) { l.agents[0].CredentialSHA256 = audit.CredentialSHA256("other") },
		"revocation gone":   func(l *Log) { l.revs = nil },
		"result status":     func(l *Log) { l.results[0].Status = "failed" },
		"once key gone":     func(l *Log) { l.onceKeys = nil },
		"once key widened":  func(l *Log) { l.onceKeys[0].AnyAgent = true },
		"revocation edited": func(l *Log) { l.revs[0].RevokedNS++ },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			l := build(t)
			l.mu.Lock()
			edit(l)
			l.mu.Unlock()
			rep, err := l.Verify(ctx)
			var brk *auditchain.Break
			if rep.OK() || !errors.As(err, &brk) {
				t.Fatalf("not found: %+v %v", rep, err)
			}
			t.Log(brk)
		})
	}
}
