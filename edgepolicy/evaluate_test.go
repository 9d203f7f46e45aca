package edgepolicy

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const pathLikeProtected = `context.arguments.path like "protected*"`

func TestHardBlock(t *testing.T) {
	s := mustLoad(t, forbidPolicy("etc", "delete", "file", 3, "", `context.arguments.path like "/etc/*"`))
	got := s.Evaluate([]Edge{deleteFileD3}, Request{ToolName: "rm", Arguments: map[string]any{"path": "/etc/passwd"}})
	if len(got) != 1 {
		t.Fatalf("violations = %+v, want one", got)
	}
	v := got[0]
	want := Violation{PolicyID: "etc", Source: "delete", Target: "file", SourceDepth: 3,
		Message: `Blocked by policy "etc" on delete->file @ D3 CONSTRAINTS.`, Reason: reasonMatched}
	if v != want {
		t.Fatalf("violation = %+v\nwant        %+v", v, want)
	}
	if d, r := Decide(got); d != Deny || !slices.Equal(r, []string{want.Message}) {
		t.Fatalf("Decide = %q %q", d, r)
	}
	clean := s.Evaluate([]Edge{deleteFileD3}, Request{ToolName: "rm", Arguments: map[string]any{"path": "/home/u/x"}})
	if len(clean) != 0 {
		t.Fatalf("non-matching path fired: %+v", clean)
	}
}

func TestConfirmationCarriesItsMessage(t *testing.T) {
	s := mustLoad(t, forbidPolicy("protected_file", "delete", "file", 3,
		`@confirm("Deleting protected files needs a human.")`, pathLikeProtected))
	got := s.Evaluate([]Edge{deleteFileD3}, Request{ToolName: "rm", Arguments: map[string]any{"path": "protected.txt"}})
	if len(got) != 1 || !got[0].RequiresConfirmation || got[0].Message != "Deleting protected files needs a human." ||
		got[0].Reason != reasonMatched {
		t.Fatalf("violations = %+v", got)
	}
	if d, r := Decide(got); d != RequireConfirmation || !slices.Equal(r, []string{"Deleting protected files needs a human."}) {
		t.Fatalf("Decide = %q %q", d, r)
	}
}

func TestCardinalityFilter(t *testing.T) {
	src := forbidPolicy("any", "delete", "file", 3, "", "") +
		forbidPolicy("single", "delete", "file", 3, `@cardinality("single")`, "") +
		forbidPolicy("multiple", "delete", "file", 3, `@cardinality("multiple")`, "")
	s := mustLoad(t, src)
	cases := []struct {
		request string
		want    []string
	}{
		{"", []string{"any", "single", "multiple"}},
		{"single", []string{"any", "single"}},
		{"multiple", []string{"any", "multiple"}},
		{"several", []string{"any", "single", "multiple"}}, // unknown value: fire everything
	}
	for _, c := range cases {
		got := policyIDs(s.Evaluate([]Edge{deleteFileD3}, Request{ToolName: "rm", Cardinality: c.request}))
		if !slices.Equal(got, c.want) {
			t.Errorf("cardinality %q fired %v, want %v", c.request, got, c.want)
		}
	}
}

func TestFailsClosedWhenUnevaluable(t *testing.T) {
	hard := forbidPolicy("hard", "delete", "file", 3, "", pathLikeProtected)
	conf := forbidPolicy("conf", "delete", "file", 3, `@confirm("Check with a human.")`, pathLikeProtected)
	s := mustLoad(t, hard+conf)
	cases := []struct {
		name string
		req  Request
		why  string
	}{
		{"missing attribute", Request{ToolName: "rm", Arguments: map[string]any{"target": "x"}}, "`path`"},
		{"no arguments at all", Request{ToolName: "rm"}, "`path`"},
		{"null attribute", Request{ToolName: "rm", Arguments: map[string]any{"path": nil}}, "`path`"},
		{"type error", Request{ToolName: "rm", Arguments: map[string]any{"path": 7.0}}, "type error"},
		{"no tool name", Request{Arguments: map[string]any{"path": "safe.txt"}}, "no tool name"},
		{"unconvertible argument", Request{ToolName: "rm", Arguments: map[string]any{"path": "safe.txt", "n": math.NaN()}}, "arguments.n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := s.Evaluate([]Edge{deleteFileD3}, c.req)
			if !slices.Equal(policyIDs(got), []string{"hard", "conf"}) {
				t.Fatalf("fired %v, want both policies", policyIDs(got))
			}
			for _, v := range got {
				if !strings.Contains(v.Reason, "could not be evaluated") || !strings.Contains(v.Reason, c.why) {
					t.Errorf("%s: reason %q, want 'could not be evaluated' and %q", v.PolicyID, v.Reason, c.why)
				}
				if !strings.HasSuffix(v.Message, "\n"+v.Reason) {
					t.Errorf("%s: message %q does not carry the reason", v.PolicyID, v.Message)
				}
			}
			if !got[1].RequiresConfirmation || !strings.HasPrefix(got[1].Message, "Check with a human.\n") {
				t.Errorf("confirmation policy lost its nature or message: %+v", got[1])
			}
			if d, _ := Decide(got); d != Deny {
				t.Errorf("Decide = %q, want DENY", d)
			}
		})
	}
}

func TestPolicyFiresOnlyOnItsExactEdge(t *testing.T) {
	s := mustLoad(t, forbidPolicy("p", "delete", "file", 3, "", ""))
	req := Request{ToolName: "rm"}
	absent := []Edge{
		{Source: "delete", Target: "file", SourceDepth: 4, TargetDepth: 2},      // other depth
		{Source: "delete", Target: "file", SourceDepth: 2, TargetDepth: 2},      // other depth
		{Source: "delete", Target: "directory", SourceDepth: 3, TargetDepth: 2}, // other target
		{Source: "write", Target: "file", SourceDepth: 3, TargetDepth: 2},       // other source
		{Source: "file", Target: "delete", SourceDepth: 3, TargetDepth: 2},      // reversed
	}
	if got := s.Evaluate(absent, req); len(got) != 0 {
		t.Fatalf("fired on absent edge: %+v", got)
	}
	if got := s.Evaluate(nil, req); len(got) != 0 {
		t.Fatalf("fired on an empty trace: %+v", got)
	}
	if got := s.Evaluate(append(absent, deleteFileD3), req); len(got) != 1 {
		t.Fatalf("did not fire once its edge was present: %+v", got)
	}
}

func TestNamesAreFoldInsensitive(t *testing.T) {
	// "STRASSE" full-folds to "strasse", as does "Straße"; "e\u0301" is NFC "é".
	src := forbidPolicy("street", "STRASSE", "Cafe\u0301", 1, "", "resource == Concept::\"Cafe\u0301\"")
	s := mustLoad(t, src)
	edge := Edge{Source: "straße", Target: "CAFÉ", SourceDepth: 1, TargetDepth: 0}
	got := s.Evaluate([]Edge{edge}, Request{ToolName: "walk"})
	if len(got) != 1 || got[0].Source != "straße" || got[0].Target != "CAFÉ" {
		t.Fatalf("violations = %+v, want one naming the trace's spelling", got)
	}
	if got[0].Reason != reasonMatched {
		t.Fatalf("resource did not use the policy's own spelling: %q", got[0].Reason)
	}
}

func TestTraceOrderThenFileOrder(t *testing.T) {
	src := forbidPolicy("w1", "write", "file", 3, "", "") +
		forbidPolicy("d1", "delete", "file", 3, "", "") +
		forbidPolicy("w2", "write", "file", 3, "", "")
	s := mustLoad(t, src)
	got := policyIDs(s.Evaluate([]Edge{deleteFileD3, writeFileD3}, Request{ToolName: "t"}))
	if want := []string{"d1", "w1", "w2"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestRepeatedEdgeEvaluatedOnce(t *testing.T) {
	s := mustLoad(t, forbidPolicy("p", "delete", "file", 3, "", ""))
	upper := Edge{Source: "DELETE", Target: "File", SourceDepth: 3, TargetDepth: 1}
	if got := s.Evaluate([]Edge{deleteFileD3, upper, deleteFileD3}, Request{ToolName: "rm"}); len(got) != 1 {
		t.Fatalf("violations = %+v, want exactly one", got)
	}
}

// TestRequestShape checks each part of the Cedar request a policy sees; each
// policy matches only if its part is exactly as documented.
func TestRequestShape(t *testing.T) {
	conds := map[string]string{
		"principal":    `principal == Agent::"anonymous"`,
		"action":       `action == Action::"delete_file"`,
		"resource":     `resource == Concept::"file"`,
		"source":       `context.source == "delete"`,
		"target":       `context.target == "file"`,
		"depth":        `context.source_depth == 3`,
		"cardinality":  `context.cardinality == "multiple"`,
		"arguments":    `context.arguments.opts.recursive && context.arguments.tags.contains("x")`,
		"decimal":      `context.arguments.ratio.greaterThan(decimal("0.5"))`,
		"absent_agent": `principal == Agent::""`,
	}
	var src strings.Builder
	for _, id := range slices.Sorted(maps.Keys(conds)) {
		src.WriteString(forbidPolicy(id, "delete", "file", 3, "", conds[id]))
	}
	s := mustLoad(t, src.String())
	req := Request{ToolName: "delete_file", Cardinality: "multiple", Arguments: map[string]any{
		"opts": map[string]any{"recursive": true}, "tags": []any{"x", "y"}, "ratio": 0.75}}
	got := policyIDs(s.Evaluate([]Edge{deleteFileD3}, req))
	want := []string{"action", "arguments", "cardinality", "decimal", "depth", "principal", "resource", "source", "target"}
	if !slices.Equal(got, want) {
		t.Fatalf("matched %v, want %v", got, want)
	}
	for _, v := range s.Evaluate([]Edge{deleteFileD3}, req) {
		if v.Reason != reasonMatched {
			t.Errorf("%s fired by error: %s", v.PolicyID, v.Reason)
		}
	}
}

func TestAgentIDReachesThePrincipal(t *testing.T) {
	s := mustLoad(t, forbidPolicy("bot", "delete", "file", 3, "", `principal == Agent::"bot-7"`))
	if got := s.Evaluate([]Edge{deleteFileD3}, Request{AgentID: "bot-7", ToolName: "rm"}); len(got) != 1 {
		t.Fatalf("named agent not matched: %+v", got)
	}
	if got := s.Evaluate([]Edge{deleteFileD3}, Request{AgentID: "bot-8", ToolName: "rm"}); len(got) != 0 {
		t.Fatalf("other agent matched: %+v", got)
	}
}

func TestUnknownCardinalityIsAbsentFromContext(t *testing.T) {
	src := forbidPolicy("reads_it", "delete", "file", 3, "", `context.cardinality == "multiple"`) +
		forbidPolicy("checks_it", "delete", "file", 3, "", `context has cardinality`)
	s := mustLoad(t, src)
	got := s.Evaluate([]Edge{deleteFileD3}, Request{ToolName: "rm"})
	if len(got) != 1 || got[0].PolicyID != "reads_it" || !strings.Contains(got[0].Reason, "could not be evaluated") {
		t.Fatalf("violations = %+v, want only reads_it, fired fail-closed", got)
	}
}

func TestNilSetEvaluatesToNothing(t *testing.T) {
	var s *Set
	if got := s.Evaluate([]Edge{deleteFileD3}, Request{ToolName: "rm"}); got != nil {
		t.Fatalf("nil set produced %v", got)
	}
}

// TestConcurrentEvaluate backs the claim that a Set is safe for concurrent
// use; it is meaningful under -race and checks results besides.
func TestConcurrentEvaluate(t *testing.T) {
	s := loadDemo(t)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for i := range 8 {
		wg.Go(func() {
			path := "protected" + strconv.Itoa(i)
			vs := s.Evaluate([]Edge{deleteFileD3}, Request{ToolName: "rm", Cardinality: "single",
				Arguments: map[string]any{"path": path}})
			if len(vs) != 1 || vs[0].PolicyID != "protected_file" {
				errs <- fmt.Sprintf("goroutine %d: %+v", i, vs)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestGroupPolicyAppliesToMembersOnly(t *testing.T) {
	s := mustLoad(t, forbidPolicy("ops_only", "delete", "file", 3, "", `principal in Group::"ops"`))
	for _, tc := range []struct {
		name   string
		groups []string
		fires  bool
	}{
		{"alice", []string{"dev", "ops"}, true},
		{"bob", []string{"dev"}, false},
		{"ops", nil, false}, // an agent named like the group is not in it
		{"", nil, false},
	} {
		got := s.Evaluate([]Edge{deleteFileD3}, Request{AgentID: tc.name, AgentGroups: tc.groups, ToolName: "rm"})
		if (len(got) == 1) != tc.fires {
			t.Errorf("agent %q in %v: fired %+v, want fired=%v", tc.name, tc.groups, got, tc.fires)
		}
		for _, v := range got {
			if v.Reason != reasonMatched {
				t.Errorf("agent %q: fired by error: %s", tc.name, v.Reason)
			}
		}
	}
}

func TestAgentIsInItself(t *testing.T) {
	s := mustLoad(t, forbidPolicy("bob", "delete", "file", 3, "", `principal in Agent::"bob"`))
	if got := s.Evaluate([]Edge{deleteFileD3}, Request{AgentID: "bob", AgentGroups: []string{"ops"}, ToolName: "rm"}); len(got) != 1 {
		t.Fatalf("bob not matched: %+v", got)
	}
	if got := s.Evaluate([]Edge{deleteFileD3}, Request{ToolName: "rm"}); len(got) != 0 {
		t.Fatalf("anonymous matched a policy on bob: %+v", got)
	}
}
