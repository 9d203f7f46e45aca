package mcp

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/grounding"
	"github.com/ewp-go/ewp/warrant"
)

const (
	mayAct  = string(warrant.MayActDecision)
	confirm = string(warrant.RequireConfirmation)
	deny    = string(warrant.Deny)
)

// The composed gate, layer by layer: each layer alone, and together. The
// warrant layer's answers come from the seeded propositions (P-verified
// allows everything; P-tentative allows low, asks on medium, denies high).
func TestComposedGate(t *testing.T) {
	grounded := []any{"delete", "file"}
	cases := []struct {
		name       string
		policies   bool
		pid, risk  string
		concepts   []any // nil: an EWP-only action
		extra      obj
		layers     []string // decisions in layer order: warrant, grounding, edge_policies
		want       string
		wantReason string // some reason of some layer
	}{
		{"warrant alone allows", true, "P-verified", "low", nil, nil, []string{mayAct}, mayAct, "warrant suffices"},
		{"warrant alone asks", true, "P-tentative", "medium", nil, nil, []string{confirm}, confirm, ""},
		{"warrant alone denies", true, "P-tentative", "high", nil, nil, []string{deny}, deny, ""},
		{"grounding alone denies", false, "P-verified", "low", []any{"delete", "network"}, rm("/tmp/a", "single"),
			[]string{mayAct, deny}, deny, "EXISTENCE: 'network' is not in the knowledge graph"},
		{"grounding allows, no policies", false, "P-verified", "low", grounded, rm("/etc/passwd", "multiple"),
			[]string{mayAct, mayAct}, mayAct, "grounded: delete, file"},
		{"policies alone ask", true, "P-verified", "low", grounded, rm("protected.txt", "single"),
			[]string{mayAct, mayAct, confirm}, confirm, "Deleting protected files needs a human."},
		{"policies alone deny", true, "P-verified", "low", grounded, rm("/etc/passwd", "single"),
			[]string{mayAct, mayAct, deny}, deny, "no_delete_under_etc"},
		{"ungrounded: grounding and policies deny", true, "P-verified", "low", []any{"delete", "file"}, mergeObj(rm("/tmp/a", "single"), obj{"min_depth": 4}),
			[]string{mayAct, deny, deny}, deny, "DEPTH: 'file' known to D3 CONSTRAINTS, requires D4 IMPLICATIONS"},
		{"warrant asks, policy asks", true, "P-tentative", "medium", grounded, rm("protected.txt", "single"),
			[]string{confirm, mayAct, confirm}, confirm, ""},
		{"warrant asks, policy denies", true, "P-tentative", "medium", grounded, rm("/etc/passwd", "single"),
			[]string{confirm, mayAct, deny}, deny, ""},
		{"warrant denies, guard allows", true, "P-tentative", "high", grounded, rm("/tmp/a", "single"),
			[]string{deny, mayAct, mayAct}, deny, ""},
		{"concepts only, allowed", true, "", "high", grounded, rm("/tmp/a", "single"),
			[]string{string(gate.Skipped), mayAct, mayAct}, mayAct, "warrant layer did not run"},
		{"concepts only, asks", true, "", "high", grounded, rm("protected.txt", "single"),
			[]string{string(gate.Skipped), mayAct, confirm}, confirm, ""},
		{"concepts only, ungrounded", true, "", "low", []any{"frobnicate"}, nil,
			[]string{string(gate.Skipped), deny, deny}, deny, "'frobnicate' is not in the knowledge graph"},
		{"empty concepts", true, "P-verified", "low", []any{}, nil,
			[]string{mayAct, deny, deny}, deny, "names no concept is never grounded"},
	}
	withPolicies, without := dialInProcess(t, demoServer(t)), dialInProcess(t, guardServer(t, newGuardLedger(t, demoGraphBytes()), nil))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := without
			if tc.policies {
				c = withPolicies
			}
			act := action(tc.risk, false)
			if tc.concepts != nil {
				act = mergeObj(act, mergeObj(obj{"concepts": tc.concepts}, tc.extra))
			}
			args := obj{"action": act}
			if tc.pid != "" {
				args["proposition_id"] = tc.pid
			}
			out := mustOK(t, call(t, c, "may_act", args))
			checkLayers(t, out, tc.layers, tc.want, tc.wantReason)
		})
	}
}

func checkLayers(t *testing.T, out obj, layers []string, want, reason string) {
	t.Helper()
	var got []string
	var all []string
	for _, l := range out["layers"].([]any) {
		got = append(got, l.(obj)["decision"].(string))
		all = append(all, reasons(l.(obj))...)
	}
	if out["decision"] != want || !reflect.DeepEqual(got, layers) {
		t.Fatalf("decision %v layers %v, want %s %v", out["decision"], got, want, layers)
	}
	if reason != "" && !strings.Contains(strings.Join(all, "\n"), reason) {
		t.Fatalf("no reason mentions %q:\n%s", reason, strings.Join(all, "\n"))
	}
	_, hasWarrant := out["warrant"]
	if skipped := layers[0] == string(gate.Skipped); skipped == hasWarrant {
		t.Fatalf("warrant fields present=%v with the warrant layer %s", hasWarrant, layers[0])
	}
}

func mergeObj(a, b obj) obj {
	out := obj{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// With only a proposition and no concepts the guard stays out entirely:
// the answer is exactly what the server without a guard gives.
func TestEWPOnlyCallIsExactlyEWP(t *testing.T) {
	guarded := dialInProcess(t, demoServer(t))
	plain := dialInProcess(t, func() *Server { s, _ := newTestServer(t); return s }())
	for _, pid := range []string{"P-verified", "P-tentative", "P-conflict", "P-contradicted", "P-degraded", "P-superseded", "P-stale", "P-empty"} {
		for _, risk := range []string{"low", "medium", "high"} {
			for _, rev := range []bool{true, false} {
				args := obj{"proposition_id": pid, "action": action(risk, rev)}
				a, b := mustOK(t, call(t, guarded, "may_act", args)), mustOK(t, call(t, plain, "may_act", args))
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("%s %s %v:\nguarded %v\nplain   %v", pid, risk, rev, a, b)
				}
				if n := len(a["layers"].([]any)); n != 1 {
					t.Fatalf("%s: %d layers, want only the warrant layer", pid, n)
				}
			}
		}
	}
}

func TestComposedGateRefusals(t *testing.T) {
	c := dialInProcess(t, demoServer(t))
	base := action("low", true)
	cases := []struct {
		name  string
		args  obj
		code  string
		names string
	}{
		{"tool_name without concepts", obj{"proposition_id": "P-verified", "action": mergeObj(base, obj{"tool_name": "rm"})}, warrant.CodeInvalidAction, "action.tool_name"},
		{"arguments without concepts", obj{"proposition_id": "P-verified", "action": mergeObj(base, obj{"arguments": obj{}})}, warrant.CodeInvalidAction, "action.arguments"},
		{"unknown cardinality", obj{"action": mergeObj(base, obj{"concepts": []any{"delete"}, "cardinality": "bulk_delete_everything"})}, warrant.CodeInvalidAction, "action.cardinality"},
		{"concepts not a list", obj{"action": mergeObj(base, obj{"concepts": "delete"})}, warrant.CodeInvalidAction, "action.concepts"},
		{"empty concept", obj{"action": mergeObj(base, obj{"concepts": []any{"delete", ""}})}, warrant.CodeInvalidAction, "action.concepts[1]"},
		{"min_depth 5", obj{"action": mergeObj(base, obj{"concepts": []any{"delete"}, "min_depth": 5})}, warrant.CodeInvalidAction, "action.min_depth"},
		{"min_depth text", obj{"action": mergeObj(base, obj{"concepts": []any{"delete"}, "min_depth": "3"})}, warrant.CodeInvalidAction, "action.min_depth"},
		{"arguments not an object", obj{"action": mergeObj(base, obj{"concepts": []any{"delete"}, "arguments": []any{"/etc"}})}, warrant.CodeInvalidAction, "action.arguments"},
		{"view_id without proposition", obj{"view_id": "v-verified", "action": mergeObj(base, obj{"concepts": []any{"delete"}})}, CodeInvalidArgument, "view_id"},
		{"neither proposition nor concepts", obj{"action": base}, CodeInvalidArgument, "proposition_id"},
		{"unknown action key", obj{"action": mergeObj(base, obj{"concepts": []any{"delete"}, "agent": "me"})}, warrant.CodeInvalidAction, "agent"},
	}
	for _, tc := range cases {
		msg := mustRefuse(t, call(t, c, "may_act", tc.args), tc.code)
		if !strings.Contains(msg, tc.names) {
			t.Errorf("%s: message does not name %s: %s", tc.name, tc.names, msg)
		}
	}
}

// failingGraph is a concept graph that cannot be read.
type failingGraph struct{}

func (failingGraph) Graph(context.Context) (*grounding.Graph, int64, error) {
	return nil, 0, errors.New("disk on fire")
}

func (failingGraph) Learn(context.Context, grounding.Gap, grounding.Candidate) ([]grounding.Primitive, error) {
	return nil, errors.New("disk on fire")
}

// When the graph cannot be read the guard fails closed: the call is
// refused as an internal error, never judged on less than it says.
func TestGuardFailsClosedWhenTheGraphFails(t *testing.T) {
	srv, _ := newTestServer(t, WithGuard(Guard{Graph: failingGraph{}, Policies: demoPolicies(t)}))
	c := dialInProcess(t, srv)
	mustRefuse(t, call(t, c, "check_grounding", obj{"concepts": []any{"file"}}), CodeInternal)
	mustRefuse(t, call(t, c, "may_act", obj{"action": guardAct([]any{"delete", "file"}, rm("/tmp/a", "single"))}), CodeInternal)
	mustRefuse(t, callCtx(ingestCtx, t, c, "learn_gap", obj{"gap": obj{"kind": "EXISTENCE", "primitive": "x"},
		"candidate": obj{"kind": "EXISTENCE", "name": "x", "d1": obj{"level": 1, "properties": props()}}}), CodeInternal)
	// An EWP-only action does not touch the graph.
	mustOK(t, call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": action("low", true)}))
}
