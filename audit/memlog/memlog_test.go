package memlog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

var t0 = time.Date(2026, 9, 21, 21, 0, 0, 0, time.UTC)

func rc(id string) *audit.Decision {
	return &audit.Decision{ID: id, Time: t0, Tool: audit.ToolMayAct, Outcome: audit.OutcomeRequireConfirmation,
		PropositionID: "P", ActionKind: "migrate", Risk: "low", Caller: audit.Caller{Transport: "stdio", Role: "evaluate", Credential: "none"},
		Layers: []audit.Layer{{Layer: "warrant", Decision: "REQUIRE_CONFIRMATION", Reasons: []string{"r"}}}}
}

// using is a MAY_ACT decision that presents approvalID.
func using(id, approvalID string) *audit.Decision {
	d := rc(id)
	d.Outcome, d.ApprovalID = audit.OutcomeMayAct, approvalID
	return d
}

func TestRecordIsACopy(t *testing.T) {
	ctx := context.Background()
	l := New(nil)
	d := rc("d1")
	if err := l.Record(ctx, d); err != nil {
		t.Fatal(err)
	}
	d.Outcome = audit.OutcomeMayAct
	d.Layers[0].Reasons[0] = "changed"
	got, err := l.Decision(ctx, "d1")
	if err != nil || got.Outcome != audit.OutcomeRequireConfirmation || got.Layers[0].Reasons[0] != "r" {
		t.Fatalf("the record changed with the caller's value: %+v %v", got, err)
	}
	if err := l.Record(ctx, rc("d1")); err == nil {
		t.Error("a decision id was recorded twice")
	}
	if _, err := l.Decision(ctx, "nope"); !errors.Is(err, audit.ErrNotFound) {
		t.Errorf("unknown decision: %v", err)
	}
}

func TestIdempotencyKeyPerCredential(t *testing.T) {
	ctx := context.Background()
	l := New(nil)
	a, b, c := rc("d1"), rc("d2"), rc("d3")
	a.IdempotencyKey, b.IdempotencyKey, c.IdempotencyKey = "k", "k", "k"
	c.Caller.Credential = "ingest-token"
	if err := l.Record(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(ctx, b); !errors.Is(err, audit.ErrDuplicateKey) {
		t.Errorf("same key, same credential: %v", err)
	}
	if err := l.Record(ctx, c); err != nil {
		t.Errorf("same key, other credential: %v", err)
	}
	if got, err := l.ByIdempotencyKey(ctx, "none", "k"); err != nil || got.ID != "d1" {
		t.Errorf("by key: %v %v", got, err)
	}
	if _, err := l.Decision(ctx, "d2"); !errors.Is(err, audit.ErrNotFound) {
		t.Error("a refused duplicate was recorded")
	}
}

func TestApprovalsAndPending(t *testing.T) {
	ctx := context.Background()
	l := New(func() time.Time { return t0 })
	for _, id := range []string{"d1", "d2"} {
		if err := l.Record(ctx, rc(id)); err != nil {
			t.Fatal(err)
		}
	}
	allowed := &audit.Decision{ID: "d3", Time: t0, Tool: audit.ToolMayAct, Outcome: audit.OutcomeMayAct}
	if err := l.Record(ctx, allowed); err != nil {
		t.Fatal(err)
	}
	if err := l.Approve(ctx, &audit.Approval{DecisionID: "d3", Verdict: audit.Approved, Approver: "ops"}); err == nil {
		t.Error("a MAY_ACT decision was approved")
	}
	if err := l.Approve(ctx, &audit.Approval{DecisionID: "d1", Verdict: audit.Approved}); err == nil {
		t.Error("an approval without approver was recorded")
	}
	ap := &audit.Approval{DecisionID: "d1", Verdict: audit.Approved, Approver: "ops", Once: true}
	if err := l.Approve(ctx, ap); err != nil || ap.ID == "" || !ap.CreatedAt.Equal(t0) {
		t.Fatalf("approve: %v %+v", err, ap)
	}
	pending, err := l.List(ctx, audit.Filter{Pending: true})
	if err != nil || len(pending) != 1 || pending[0].ID != "d2" {
		t.Errorf("pending: %+v %v", pending, err)
	}
	trail, err := l.ApprovalsFor(ctx, "d1")
	if err != nil || len(trail) != 1 || trail[0].ID != ap.ID {
		t.Errorf("trail: %+v %v", trail, err)
	}
	page, err := l.List(ctx, audit.Filter{After: "d1", Limit: 1})
	if err != nil || len(page) != 1 || page[0].ID != "d2" {
		t.Errorf("page: %+v %v", page, err)
	}
}

func TestClosed(t *testing.T) {
	l := New(nil)
	_ = l.Close()
	if err := l.Record(context.Background(), rc("d1")); !errors.Is(err, ErrClosed) {
		t.Errorf("record after close: %v", err)
	}
}

// Approve and RecordUse follow the durable store's rules (audit.Admit,
// audit.Consumable): the approval records the answered action, a decision
// is answered once, only REQUIRE_CONFIRMATION is answered, and a
// rejection or an expired approval is never consumed.
func TestApproveAsTheDurableStore(t *testing.T) {
	ctx := context.Background()
	now := t0
	l := New(func() time.Time { return now })
	d := rc("d1")
	d.ActionID, d.ActionKind, d.Concepts, d.ArgumentsHash = "act-1", "deploy", []string{"service"}, "ab12"
	for _, rec := range []*audit.Decision{d, rc("d2"), rc("d3"), {ID: "d4", Time: t0, Tool: audit.ToolMayAct, Outcome: audit.OutcomeMayAct}} {
		if err := l.Record(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	ap := &audit.Approval{DecisionID: "d1", Verdict: audit.Approved, Approver: "ops", Once: true, Until: t0.Add(time.Minute)}
	if err := l.Approve(ctx, ap); err != nil {
		t.Fatal(err)
	}
	stored, err := l.Approval(ctx, ap.ID)
	if err != nil || stored.Action == nil || stored.Action.ActionID != "act-1" || stored.Action.ArgumentsHash != "ab12" {
		t.Fatalf("the approval does not record the answered action: %+v %v", stored, err)
	}
	for _, tc := range []struct {
		a    *audit.Approval
		want error
	}{
		{&audit.Approval{DecisionID: "d1", Verdict: audit.Approved, Approver: "bob", Once: true}, audit.ErrAnswered},
		{&audit.Approval{DecisionID: "d4", Verdict: audit.Approved, Approver: "bob", Once: true}, audit.ErrNotPending},
		{&audit.Approval{DecisionID: "nope", Verdict: audit.Approved, Approver: "bob", Once: true}, audit.ErrNotFound},
		{&audit.Approval{DecisionID: "d2", Verdict: audit.Rejected, Approver: "bob"}, audit.ErrInvalidApproval},
		{&audit.Approval{DecisionID: "d2", Verdict: audit.Approved, Approver: "bob", Scope: &audit.Scope{PropositionID: "P"}}, audit.ErrInvalidApproval},
	} {
		if err := l.Approve(ctx, tc.a); !errors.Is(err, tc.want) {
			t.Errorf("approve %+v: %v, want %v", tc.a, err, tc.want)
		}
	}
	rejection := &audit.Approval{DecisionID: "d2", Verdict: audit.Rejected, Approver: "bob", Note: "not today"}
	if err := l.Approve(ctx, rejection); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordUse(ctx, using("u1", rejection.ID)); !errors.Is(err, audit.ErrApprovalRejected) {
		t.Errorf("a rejection was used: %v", err)
	}
	now = t0.Add(time.Minute)
	if err := l.RecordUse(ctx, using("u2", ap.ID)); !errors.Is(err, audit.ErrApprovalExpired) {
		t.Errorf("an expired approval was used: %v", err)
	}
	for _, id := range []string{"u1", "u2"} {
		if _, err := l.Decision(ctx, id); !errors.Is(err, audit.ErrNotFound) {
			t.Errorf("decision %s was recorded though its approval was refused: %v", id, err)
		}
	}
}
