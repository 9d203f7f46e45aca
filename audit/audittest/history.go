package audittest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
	"github.com/ewp-go/ewp/audit/memlog"
)

// PinnedHead is the head of the history pinnedHistory writes, in chain
// payload format 1 (auditchain.PayloadFormat). It was computed once, by
// a script independent of this code, from the format as audit/README.md
// specifies it ("The chain, format 1"): the payloads' canonical JSON, the
// bodies' sha256, seqs numbered per table without gaps, refusals leaving
// no trace. Every store must reach it; if one does not, its payload
// encoding, numbering or order changed, which makes a new format (and
// every kept head of the old one fail).
const PinnedHead = "7:0260b6ef09eb7ef0969a0e2c24ac8eae35c882c03103da6c767090b4f82044ee"

// pinned is a decision of the pinned history: fixed id and time, and
// only the fields the spec's script writes.
func pinned(n int, outcome audit.Outcome, action string) *audit.Decision {
	return &audit.Decision{ID: fmt.Sprintf("01a2321e-666d-75f3-8893-2b1f05c5e6%02d", n), Time: T0, Tool: audit.ToolMayAct,
		Caller:        audit.Caller{Transport: "stdio", Role: "evaluate", Credential: "agent-1"},
		PropositionID: "P-pin", ActionID: action, ActionKind: "deploy", Risk: "high", Reversible: new(false), Outcome: outcome}
}

const pinnedApproval = "01a2321e-8280-70a5-b142-d4ec45396001"

// pinnedHead: one history, with every kind of refusal (a duplicate
// idempotency key, a duplicate approval_id, a second use of a once
// approval, a decision_id recorded twice), has one head on every store:
// the one pinned from the format's spec.
func pinnedHead(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	refused := func(what string, err error, want error) {
		t.Helper()
		if err == nil || (want != nil && !errors.Is(err, want)) {
			t.Fatalf("%s: got %v, want a refusal (%v)", what, err, want)
		}
	}
	d1 := record(t, l, pinned(1, audit.OutcomeRequireConfirmation, "act-1"))
	keyed := pinned(2, audit.OutcomeMayAct, "act-2")
	keyed.IdempotencyKey = "k1"
	record(t, l, keyed)
	again := pinned(7, audit.OutcomeMayAct, "act-2")
	again.IdempotencyKey = "k1"
	refused("a duplicate idempotency key", l.Record(ctx, again), audit.ErrDuplicateKey)
	d3 := record(t, l, pinned(3, audit.OutcomeRequireConfirmation, "act-3"))
	if err := l.Approve(ctx, &audit.Approval{ID: pinnedApproval, DecisionID: d1.ID, Verdict: audit.Approved, Approver: "ops", Once: true}); err != nil {
		t.Fatal(err)
	}
	dupApproval := &audit.Approval{ID: pinnedApproval, DecisionID: d3.ID, Verdict: audit.Approved, Approver: "ops", Once: true}
	refused("a duplicate approval_id", l.Approve(ctx, dupApproval), audit.ErrInvalidApproval)
	use := pinned(4, audit.OutcomeMayAct, "act-1")
	use.ApprovalID = pinnedApproval
	if err := l.RecordUse(ctx, use); err != nil {
		t.Fatal(err)
	}
	second := pinned(5, audit.OutcomeMayAct, "act-1")
	second.ApprovalID = pinnedApproval
	refused("a second use", l.RecordUse(ctx, second), audit.ErrApprovalUsed)
	refused("a decision_id recorded twice", l.Record(ctx, pinned(1, audit.OutcomeDeny, "act-1")), nil)
	record(t, l, pinned(6, audit.OutcomeDeny, "act-6"))
	h, err := l.Head(ctx)
	if err != nil || h.String() != PinnedHead {
		t.Fatalf("head %s (%v), want %s", h, err, PinnedHead)
	}
	if rep := mustVerify(t, l); rep.Head.String() != PinnedHead {
		t.Fatalf("verify reached %s", rep.Head)
	}
}

// sameHistorySameHead: whatever the batches, the chain is the history
// the log recorded, and only that. Concurrent Records through three
// handles (some refused for a reused id or key), then approvals, then
// concurrent Records and presentations of the once approvals (most
// refused as used) are read back in recording order and written again
// one at a time, to a fresh log of the same store and to the in-memory
// log: all three heads are equal.
func sameHistorySameHead(t *testing.T, s Store) {
	l, _ := s.newLog(t)
	handles := []Log{l, s.again(t, l, false), s.again(t, l, false)}
	race := func(n int, write func(h Log, i int) error, allowed ...error) {
		t.Helper()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if err := write(handles[i%len(handles)], i); err != nil && !refusedAs(err, allowed) {
					t.Errorf("write %d: %v", i, err)
				}
			})
		}
		wg.Wait()
	}
	reused := audit.NewID()
	race(48, func(h Log, i int) error {
		d := PendingDecision("P", i)
		switch i % 4 {
		case 1:
			d.ID = reused
		case 2:
			d.IdempotencyKey = fmt.Sprintf("k%d", i%8)
		}
		return h.Record(ctx, d)
	}, audit.ErrDuplicateKey, errRecorded)
	before := mustVerify(t, l).Decisions
	pending, err := l.List(ctx, audit.Filter{Pending: true, Limit: 6})
	if err != nil || len(pending) != 6 {
		t.Fatalf("pending: %d %v", len(pending), err)
	}
	var approvals []*audit.Approval
	for _, d := range pending {
		approvals = append(approvals, approveOnce(t, l, d.ID))
	}
	race(36, func(h Log, i int) error {
		if i%3 == 0 {
			return h.Record(ctx, PendingDecision("P", 100+i))
		}
		return h.RecordUse(ctx, UsingDecision(approvals[i%6].ID, 100+i))
	}, audit.ErrApprovalUsed)
	want := mustVerify(t, l).Head

	fresh, _ := s.newLog(t)
	for _, r := range []audit.Log{fresh, memlog.New(func() time.Time { return t0 })} {
		replay(t, l, r, before, approvals)
		if got, err := r.Head(ctx); err != nil || got != want {
			t.Fatalf("the history written again one write at a time ends at %s (%v) in %T; the log wrote %s", got, err, r, want)
		}
	}
}

// errRecorded stands for the refusal of a decision_id already recorded,
// which has no error value of its own.
var errRecorded = errors.New("is already recorded")

func refusedAs(err error, allowed []error) bool {
	for _, a := range allowed {
		if errors.Is(err, a) || (a == errRecorded && strings.Contains(err.Error(), a.Error())) {
			return true
		}
	}
	return false
}

// replay writes l's history to r one write at a time: its decisions in
// recording order, the approvals after the first n of them, and each
// decision that used an approval with its use.
func replay(t *testing.T, l Log, r audit.Log, n int64, approvals []*audit.Approval) {
	t.Helper()
	var k int64
	err := l.Each(ctx, auditchain.Query{}, func(d *audit.Decision) error {
		if k++; k == n+1 {
			for _, a := range approvals {
				again := &audit.Approval{ID: a.ID, DecisionID: a.DecisionID, Verdict: a.Verdict, Approver: a.Approver, Once: a.Once}
				if err := r.Approve(ctx, again); err != nil {
					return err
				}
			}
		}
		if d.ApprovalID == "" {
			return r.Record(ctx, d)
		}
		if u, err := l.UseOf(ctx, d.ApprovalID); err != nil || u.UsedBy != d.ID {
			return fmt.Errorf("decision %s presents approval %s, which it did not use (%v)", d.ID, d.ApprovalID, err)
		}
		return r.RecordUse(ctx, d)
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
}
