package mcp

import (
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

// Edge policies at the MCP level, on the demo graph and the demo policy
// file (three policies on delete→file @ D3: protected_file asks for a
// confirmation, no_delete_under_etc blocks, bulk_delete asks for a
// confirmation when the call may touch several files).
func TestEdgePolicies(t *testing.T) {
	deleteFile := []any{"delete", "file"}
	cases := []struct {
		name     string
		concepts []any
		extra    obj
		decision warrant.Verdict
		fired    []string
		reason   string // a reason the policy layer must give
	}{
		{"hard block", deleteFile, rm("/etc/passwd", "single"), warrant.Deny, []string{"no_delete_under_etc"}, `Blocked by policy "no_delete_under_etc"`},
		{"confirmation", deleteFile, rm("protected.txt", "single"), warrant.RequireConfirmation, []string{"protected_file"}, "Deleting protected files needs a human."},
		{"single skips bulk_delete", deleteFile, rm("/tmp/notes.txt", "single"), warrant.MayActDecision, nil, "no edge policy fired"},
		{"multiple fires bulk_delete", deleteFile, rm("/tmp/notes.txt", "multiple"), warrant.RequireConfirmation, []string{"bulk_delete"}, "Deleting several files at once needs a human."},
		{"unset fires bulk_delete", deleteFile, rm("/tmp/notes.txt", ""), warrant.RequireConfirmation, []string{"bulk_delete"}, "Deleting several files at once needs a human."},
		{"hard wins over confirmation", deleteFile, rm("/etc/x", "multiple"), warrant.Deny, []string{"no_delete_under_etc", "bulk_delete"}, `Blocked by policy "no_delete_under_etc"`},
		// Fail closed: a condition reading a missing argument cannot be
		// evaluated, so both path policies fire.
		{"missing argument", deleteFile, obj{"tool_name": "rm", "arguments": obj{}, "cardinality": "single"}, warrant.Deny,
			[]string{"protected_file", "no_delete_under_etc"}, "could not be evaluated"},
		{"no tool name", deleteFile, obj{"arguments": obj{"path": "/tmp/x"}, "cardinality": "single"}, warrant.Deny,
			[]string{"protected_file", "no_delete_under_etc"}, "no tool name"},
		// A policy only sees its exact edge in the trace: without file in the
		// query, delete→file is not in the trace.
		{"edge absent from trace", []any{"delete"}, rm("/etc/passwd", "multiple"), warrant.MayActDecision, nil, "no edge policy fired on the 0 APPLIES_TO edges"},
		// An ungrounded action never reaches the policies.
		{"ungrounded", []any{"delete", "file", "network"}, rm("/etc/passwd", "multiple"), warrant.Deny, nil, "requires a grounded result"},
	}
	eachDialer(t, demoServer, func(t *testing.T, c *client.Client) {
		for _, tc := range cases {
			out := mustOK(t, call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": guardAct(tc.concepts, tc.extra)}))
			pl := layer(out, gate.PolicyLayerName)
			if out["decision"] != string(tc.decision) || pl["decision"] != string(tc.decision) {
				t.Errorf("%s: decision %v (policy layer %v), want %s", tc.name, out["decision"], pl["decision"], tc.decision)
			}
			if got := firedIDs(pl); !slices.Equal(got, tc.fired) {
				t.Errorf("%s: fired %v, want %v", tc.name, got, tc.fired)
			}
			if !slices.ContainsFunc(reasons(pl), func(r string) bool { return strings.Contains(r, tc.reason) }) {
				t.Errorf("%s: reasons %q lack %q", tc.name, reasons(pl), tc.reason)
			}
		}
	})
}

// eachDialer runs fn against a fresh server from mk, over HTTP and stdio.
func eachDialer(t *testing.T, mk func(testing.TB, ...Option) *Server, fn func(*testing.T, *client.Client)) {
	for _, d := range dialers {
		t.Run(d.name, func(t *testing.T) { fn(t, d.dial(t, mk(t), false)) })
	}
}

func firedIDs(policyLayer obj) []string {
	var out []string
	for _, v := range policyLayer["detail"].(obj)["violations"].([]any) {
		out = append(out, v.(obj)["policy_id"].(string))
	}
	return out
}

// A graph change that strands a placement (here a re-ingested delete
// without its D3 edge to file) makes the policy layer deny every guarded
// action, naming the orphans, instead of silently dropping the policy.
func TestOrphanedPlacementFailsClosedAtRunTime(t *testing.T) {
	gl := newGuardLedger(t, demoGraphBytes())
	c := dialInProcess(t, guardServer(t, gl, demoPolicies(t)))
	args := obj{"proposition_id": "P-verified", "action": guardAct([]any{"delete", "file"}, rm("/tmp/a", "single"))}
	if out := mustOK(t, call(t, c, "may_act", args)); out["decision"] != string(warrant.MayActDecision) {
		t.Fatalf("before the change: %v", out["decision"])
	}
	gl.ingest(t, []byte(`{"graph": "shrunk", "primitives": [{"name": "delete", "depths": [{"level": 0},
	  {"level": 1, "properties": {"d": "remove"}}, {"level": 2, "properties": {"d": "x"}},
	  {"level": 3, "properties": {"d": "y"}, "relata": [{"type": "APPLIES_TO", "target": "directory", "target_depth": 2}]}]}]}`))
	out := mustOK(t, call(t, c, "may_act", args))
	pl := layer(out, gate.PolicyLayerName)
	rs := strings.Join(reasons(pl), "\n")
	if out["decision"] != string(warrant.Deny) || !strings.Contains(rs, "no longer match the concept graph") ||
		strings.Count(rs, "[no APPLIES_TO edge at this source depth]") != 3 {
		t.Fatalf("decision %v, reasons:\n%s", out["decision"], rs)
	}
	// Actions that name no concepts are not the guard's: unaffected.
	if out := mustOK(t, call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": action("low", true)})); out["decision"] != string(warrant.MayActDecision) {
		t.Fatalf("EWP-only action: %v", out["decision"])
	}
}
