package audittest

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// PendingRetries checks the inbox's grouping on a log of any store (issue
// 19 item 7): identical retries of one pending call from one caller are
// one group with a count; answering the group answers its newest
// decision and closes the older ones as superseded; stale groups are
// rejected all at once, with a note.
func PendingRetries(t *testing.T, l audit.Log) {
	at := func(d *audit.Decision, minutes int) *audit.Decision {
		d.ID, d.Time = audit.NewID(), t0.Add(time.Duration(minutes)*time.Minute)
		return record(t, l, d)
	}
	var retries []string
	for i := range 3 {
		retries = append(retries, at(pendingDecision("P-db", 1), i).ID)
	}
	otherCaller := pendingDecision("P-db", 1)
	otherCaller.Caller.Credential = "agent-2"
	at(otherCaller, 3)
	at(pendingDecision("P-db", 2), 4)
	multiple := pendingDecision("P-db", 1)
	multiple.Cardinality = "multiple"
	late := at(multiple, 5)

	groups, err := audit.PendingGroups(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if counts := groupCounts(groups); counts != "3 1 1 1" {
		t.Fatalf("group sizes %q, want 3 1 1 1 (one group per identical gate input and caller)", counts)
	}
	g := groups[0]
	if g.Newest.ID != retries[2] || !g.First.Equal(t0) || strings.Join(g.IDs, " ") != strings.Join(retries, " ") {
		t.Fatalf("group %+v: want the three retries, newest %s", g, retries[2])
	}

	op := NewOperator("ops")
	sign := func(a *audit.Approval, d *audit.Decision) error { return op.Signer.Sign(a, d, t0.Add(time.Hour)) }
	answer := &audit.Approval{DecisionID: g.Newest.ID, Verdict: audit.Approved, Once: true}
	if err := sign(answer, &g.Newest); err != nil {
		t.Fatal(err)
	}
	closed, err := audit.AnswerGroup(ctx, l, g, answer, sign)
	if err != nil || closed != 2 {
		t.Fatalf("AnswerGroup closed %d: %v", closed, err)
	}
	for _, id := range retries[:2] {
		as, err := l.ApprovalsFor(ctx, id)
		if err != nil || len(as) != 1 || as[0].Verdict != audit.Rejected || !strings.Contains(as[0].Note, "superseded") || !strings.Contains(as[0].Note, answer.ID) {
			t.Fatalf("older retry %s: answers %+v %v; want a rejection naming %s", id, as, err, answer.ID)
		}
		if _, err := op.Keys.Verify(&as[0]); err != nil {
			t.Fatalf("older retry %s: the superseding rejection is not signed by the operator: %v", id, err)
		}
	}

	if _, err := audit.RejectStale(ctx, l, t0.Add(time.Hour), "ops", " ", sign); !errors.Is(err, audit.ErrInvalidApproval) {
		t.Fatalf("a rejection without a note: %v", err)
	}
	n, err := audit.RejectStale(ctx, l, late.Time, "ops", "stale; ask again if still needed", sign)
	if err != nil || n != 2 {
		t.Fatalf("RejectStale rejected %d: %v; want the two groups older than %s", n, err, late.Time)
	}
	groups, err = audit.PendingGroups(ctx, l)
	if err != nil || len(groups) != 1 || groups[0].Newest.ID != late.ID {
		t.Fatalf("pending after the answers: %+v %v; want only %s", groups, err, late.ID)
	}
}

func pendingRetries(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	PendingRetries(t, l)
	MustVerify(t, l)
}

func groupCounts(gs []audit.PendingGroup) string {
	var out []string
	for _, g := range gs {
		out = append(out, strconv.Itoa(g.Count()))
	}
	return strings.Join(out, " ")
}

// ScopeBounds checks on a log of any store that an approval is stored
// only as package audit admits it (issue 19 items 3 and 6): a scope
// naming nothing but its proposition is refused, a guard-only decision
// (no proposition) takes a scope of its tool and concepts, and a stored
// scope never covers a riskier call than the one it answered.
func ScopeBounds(t *testing.T, l audit.Log) {
	d := pendingDecision("P-db", 1)
	d.ID = audit.NewID() // the in-memory log takes the server's id
	record(t, l, d)
	empty := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Approver: "ops", Scope: &audit.Scope{PropositionID: "P-db"}, Until: t0.Add(time.Hour)}
	if err := l.Approve(ctx, empty); !errors.Is(err, audit.ErrInvalidApproval) || !strings.Contains(err.Error(), "names no action kind, tool or concepts") {
		t.Fatalf("an empty scope: %v", err)
	}
	guardOnly := pendingDecision("", 2)
	guardOnly.ID, guardOnly.ViewID, guardOnly.ViewHash, guardOnly.Risk = audit.NewID(), "", "", "medium"
	record(t, l, guardOnly)
	a := &audit.Approval{DecisionID: guardOnly.ID, Verdict: audit.Approved, Approver: "ops",
		Scope: &audit.Scope{ToolName: "psql", Concepts: []string{"database"}}, Until: t0.Add(time.Hour)}
	if err := l.Approve(ctx, a); err != nil {
		t.Fatalf("a scope of a guard-only decision: %v", err)
	}
	stored, err := l.Approval(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	riskier := pendingDecision("", 3)
	if err := stored.Covers(riskier, t0); !errors.Is(err, audit.ErrApprovalOutOfScope) || !strings.Contains(err.Error(), `risk "high" is above`) {
		t.Fatalf("the stored scope covers a riskier call: %v", err)
	}
	riskier.Risk = "low"
	if err := stored.Covers(riskier, t0); err != nil {
		t.Fatalf("the stored scope does not cover a less risky call: %v", err)
	}
}

func scopeBounds(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	ScopeBounds(t, l)
	MustVerify(t, l)
}
