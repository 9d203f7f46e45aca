package mcp

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/warrant"
)

// slowApprovals is a log whose approval reads take delay (a slow
// store), so a call presenting one passes its deadline inside the
// approval layer, after it found the approval covers the call.
type slowApprovals struct {
	*memlog.Log
	delay time.Duration
	// read is closed once an approval read has returned.
	once sync.Once
	read chan struct{}
}

func (l *slowApprovals) Approval(ctx context.Context, id string) (*audit.Approval, error) {
	time.Sleep(l.delay)
	defer l.once.Do(func() { close(l.read) })
	return l.Log.Approval(ctx, id)
}

// A call that times out while its evaluation is judging a single-use
// approval answers EWP_REFUSE_TIMEOUT and never uses the approval, even
// though the abandoned evaluation goes on and finds it covers the call;
// the timeout is on record as a refusal, the chain verifies, and the
// approval then lifts the next call. Run under -race: the abandoned
// evaluation writes nothing the recorded decision is read from.
func TestTimedOutCallNeverUsesTheApproval(t *testing.T) {
	ml := memlog.New(func() time.Time { return testNow })
	slow := &slowApprovals{Log: ml, read: make(chan struct{})}
	srv, _ := newTestServer(t, WithDecisionLog(testLog(slow)), WithRequestTimeout(200*time.Millisecond))
	c := dialStdio(t, srv, false)
	asked := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
	ap := approve(t, ml, audit.Approval{DecisionID: asked, Once: true})

	slow.delay = 400 * time.Millisecond
	got := call(t, c, "may_act", mergeObj(confirmArgs(), obj{"approval_id": ap}))
	if got.code != CodeTimeout {
		t.Fatalf("want %s, got %+v", CodeTimeout, got)
	}
	<-slow.read
	time.Sleep(100 * time.Millisecond) // the abandoned evaluation ends
	if by, used := ml.UsedBy(ap); used {
		t.Fatalf("a call answered %s used the approval (by %s)", CodeTimeout, by)
	}
	refusals, err := ml.List(context.Background(), audit.Filter{Outcome: audit.OutcomeRefused})
	if err != nil || len(refusals) != 1 || refusals[0].Code != CodeTimeout || refusals[0].ApprovalID != ap {
		t.Fatalf("the timeout's record: %+v %v", refusals, err)
	}
	if rep, err := ml.Verify(context.Background()); err != nil || rep.Uses != 0 {
		t.Fatalf("verify: %+v %v", rep, err)
	}

	slow.delay = 0
	lifted := mustOK(t, call(t, c, "may_act", mergeObj(confirmArgs(), obj{"approval_id": ap})))
	if lifted["decision"] != string(warrant.MayActDecision) {
		t.Fatalf("the unused approval no longer lifts the call: %v", lifted)
	}
	if by, _ := ml.UsedBy(ap); by != decisionID(t, lifted) {
		t.Fatalf("approval used by %q, want the call that answered MAY_ACT", by)
	}
}

// fullDisk is a log on a disk that fills up: MAY_ACT decisions cannot be
// written, with or without an approval's use.
type fullDisk struct{ *memlog.Log }

var errDiskFull = errors.New("write decision log: database or disk is full")

func (l fullDisk) Record(ctx context.Context, d *audit.Decision) error {
	if d.Outcome == audit.OutcomeMayAct {
		return errDiskFull
	}
	return l.Log.Record(ctx, d)
}

func (l fullDisk) RecordUse(context.Context, *audit.Decision) error { return errDiskFull }

// When the decision an approval lifted cannot be written, the call is not
// answered and the approval stays unused: its use and the decision are
// one write, so no approval is ever "used by" a decision that is not in
// the log; the chain verifies.
func TestUnrecordedDecisionLeavesTheApprovalUnused(t *testing.T) {
	ml := memlog.New(func() time.Time { return testNow })
	srv, _ := newTestServer(t, WithDecisionLog(testLog(fullDisk{ml})))
	c := dialStdio(t, srv, false)
	asked := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
	ap := approve(t, ml, audit.Approval{DecisionID: asked, Once: true})
	got := call(t, c, "may_act", mergeObj(confirmArgs(), obj{"approval_id": ap}))
	if got.code != CodeInternal {
		t.Fatalf("a decision that could not be recorded was answered: %+v", got)
	}
	if by, used := ml.UsedBy(ap); used {
		t.Fatalf("the approval is used by %s, which is not on record", by)
	}
	if rep, err := ml.Verify(context.Background()); err != nil || rep.Uses != 0 || rep.Decisions != 1 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// usedMeanwhile is a log whose approval is used by another server (a
// replica) between the approval layer's check and the record.
type usedMeanwhile struct {
	*memlog.Log
	other func()
}

func (l usedMeanwhile) RecordUse(ctx context.Context, d *audit.Decision) error {
	l.other()
	return l.Log.RecordUse(ctx, d)
}

// An approval another replica used after this call judged it covered is
// refused by the record itself: the call is decided again without it
// (REQUIRE_CONFIRMATION, APPROVAL_USED) and that decision is recorded and
// answered, with its decision_id.
func TestApprovalUsedMeanwhileIsDecidedAgain(t *testing.T) {
	ml := memlog.New(func() time.Time { return testNow })
	var ap string
	other := func() {
		d := &audit.Decision{Tool: audit.ToolMayAct, Outcome: audit.OutcomeMayAct, ApprovalID: ap,
			Caller: audit.Caller{Transport: "http", Role: "evaluate"}}
		if err := ml.RecordUse(context.Background(), d); err != nil {
			t.Errorf("the other replica: %v", err)
		}
	}
	srv, _ := newTestServer(t, WithDecisionLog(testLog(usedMeanwhile{ml, other})))
	c := dialStdio(t, srv, false)
	asked := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
	ap = approve(t, ml, audit.Approval{DecisionID: asked, Once: true})
	out := mustOK(t, call(t, c, "may_act", mergeObj(confirmArgs(), obj{"approval_id": ap})))
	dec, why, _ := approvalOf(t, out)
	if out["decision"] != string(warrant.RequireConfirmation) || dec != string(warrant.RequireConfirmation) || !startsWith(why, ReasonApprovalUsed+":") {
		t.Fatalf("want REQUIRE_CONFIRMATION with %s, got %v", ReasonApprovalUsed, out)
	}
	rec, err := ml.Decision(context.Background(), decisionID(t, out))
	if err != nil || rec.Outcome != audit.OutcomeRequireConfirmation || rec.Layers[len(rec.Layers)-1].Decision != audit.VerdictRequireConfirmation {
		t.Fatalf("the record: %+v %v", rec, err)
	}
}

func startsWith(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }
