package gate

import (
	"context"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/grounding"
)

// fixedGraph is a GraphSource over one graph that never changes.
type fixedGraph struct{ g *grounding.Graph }

func (f fixedGraph) Graph(context.Context) (*grounding.Graph, int64, error) { return f.g, 1, nil }
func (fixedGraph) Learn(context.Context, grounding.Gap, grounding.Candidate) ([]grounding.Primitive, error) {
	panic("not used")
}

func demoGuard(t *testing.T, policies string) *Guard {
	t.Helper()
	doc, err := grounding.DecodeDocument(fixtures.DemoGraph)
	if err != nil {
		t.Fatal(err)
	}
	g0, err := grounding.NewGraph(nil)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := g0.ApplyDocument(doc, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	set, err := edgepolicy.Load("t.cedar", []byte(policies))
	if err != nil {
		t.Fatal(err)
	}
	return NewGuard(fixedGraph{g}, set, nil)
}

// The edge-policy layer makes the request's agent the Cedar principal,
// with its groups as parents: a policy on a group applies to its members
// only.
func TestEdgePolicyOnGroupAppliesToMembersOnly(t *testing.T) {
	gd := demoGuard(t, `@id("ops_no_delete") @source("delete") @target("file") @source_depth("3")
forbid (principal in Group::"ops", action, resource);`)
	layer := gd.Layers()[1]
	for _, tc := range []struct {
		agent audit.Principal
		want  audit.Verdict
	}{
		{audit.Principal{Name: "alice", Groups: []string{"ops"}}, audit.VerdictDeny},
		{audit.Principal{Name: "bob", Groups: []string{"dev"}}, audit.VerdictMayAct},
		{audit.Principal{}, audit.VerdictMayAct},
	} {
		in := Input{Agent: tc.agent, Guard: NewGuardCall(GuardAction{Concepts: []string{"delete", "file"}, ToolName: "rm",
			Cardinality: "single", Arguments: map[string]any{"path": "/tmp/x"}})}
		d, err := layer.Decide(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if d.Decision != tc.want {
			t.Errorf("%+v: %s %v, want %s", tc.agent, d.Decision, d.Reasons, tc.want)
		}
	}
}
