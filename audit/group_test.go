package audit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// Identical gate input from one caller is one group, whatever form the
// risk policy and concepts take; any other field, or another caller,
// makes another group, and no two values can pass for one.
func TestGroupPending(t *testing.T) {
	base := func(id string, minutes int) audit.Decision {
		d := *answered()
		d.ID, d.Time = id, t0.Add(time.Duration(minutes)*time.Minute)
		d.Caller = audit.Caller{Transport: "http", Role: "evaluate", Credential: "agent", RemoteAddr: "127.0.0.1:1"}
		d.RiskPolicy = strict
		return d
	}
	same := base("d2", 1)
	same.Caller.RemoteAddr = "127.0.0.1:2" // a new connection, the same caller
	same.Concepts = []string{"SCHEMA", "Database"}
	same.RiskPolicy = map[string]any{"version": "0.1.0", "policy_id": "action-v0.1", "high_requires_no_open_conflict": true, "high_requires_accepted": true}
	ds := []audit.Decision{base("d1", 0), same}
	edits := []func(d *audit.Decision){
		func(d *audit.Decision) { d.Caller.Credential = "agent-2" },
		func(d *audit.Decision) { d.Agent = "builder" }, // another agent over the same credential
		func(d *audit.Decision) { d.Cardinality = "multiple" },
		func(d *audit.Decision) { d.MinDepth = new(1) },
		func(d *audit.Decision) { d.RiskPolicy = relaxed },
		func(d *audit.Decision) { d.ActionID, d.ActionKind = "act-1m", "igrate" }, // "act-1"+"migrate" split elsewhere
		func(d *audit.Decision) { d.PropositionID = "" },
	}
	for i, edit := range edits {
		d := base("e"+string(rune('0'+i)), 2+i)
		edit(&d)
		ds = append(ds, d)
	}
	groups := audit.GroupPending(ds)
	if len(groups) != 1+len(edits) {
		t.Fatalf("%d groups, want %d", len(groups), 1+len(edits))
	}
	if g := groups[0]; g.Count() != 2 || g.Newest.ID != "d2" || !g.First.Equal(t0) || !g.Has("d1") || strings.Join(g.IDs, ",") != "d1,d2" {
		t.Fatalf("first group %+v", g)
	}
}
