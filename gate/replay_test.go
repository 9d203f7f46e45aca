package gate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// A retry is the same call only if it asks the same thing; the first
// difference is named as the request field the caller can fix.
func TestDiffers(t *testing.T) {
	yes := true
	prev := &audit.Decision{Tool: audit.ToolMayAct, PropositionID: "P-1", ActionID: "a", ActionKind: "k", Risk: "high", Reversible: &yes}
	same := *prev
	if got := Differs(&same, prev); got != "" {
		t.Errorf("the same call differs in %q", got)
	}
	for want, change := range map[string]func(d *audit.Decision){
		"tool":           func(d *audit.Decision) { d.Tool = audit.ToolCheckGrounding },
		"approval_id":    func(d *audit.Decision) { d.ApprovalID = "A-1" },
		"proposition_id": func(d *audit.Decision) { d.PropositionID = "P-2" },
		"action.kind":    func(d *audit.Decision) { d.ActionKind = "other" },
	} {
		d := *prev
		change(&d)
		if got := Differs(&d, prev); got != want {
			t.Errorf("changed %s: Differs names %q", want, got)
		}
	}
}

// A MAY_ACT an approval gave is not replayed once that approval is gone;
// a decision past the window is not replayed at all.
func TestReplayable(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := Replays{Log: approvalsOf{}, Window: time.Minute}
	lifted := &audit.Decision{ID: "D-1", Time: now, Outcome: audit.OutcomeMayAct, ApprovalID: "A-1", Layers: []audit.Layer{
		{Layer: WarrantLayerName, Decision: audit.VerdictRequireConfirmation},
		{Layer: ApprovalLayerName, Decision: audit.VerdictMayAct},
	}}
	if err := r.Replayable(context.Background(), lifted, now); !errors.Is(err, audit.ErrReplayExpired) {
		t.Errorf("MAY_ACT from an approval not on record: %v", err)
	}
	plain := &audit.Decision{ID: "D-2", Time: now, Outcome: audit.OutcomeDeny}
	if err := r.Replayable(context.Background(), plain, now.Add(30*time.Second)); err != nil {
		t.Errorf("within the window: %v", err)
	}
	if err := r.Replayable(context.Background(), plain, now.Add(2*time.Minute)); !errors.Is(err, audit.ErrReplayExpired) {
		t.Errorf("past the window: %v", err)
	}
}
