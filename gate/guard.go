package gate

import (
	"context"
	"log/slog"
	"sync"

	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/grounding"
)

// GraphSource is the concept graph as the grounding guard needs it
// (GROUNDING.md §0). graphstore.Store implements it over the ledger.
type GraphSource interface {
	// Graph returns the current graph and its version. Versions only grow;
	// the guard re-validates edge-policy placements whenever it changes.
	Graph(ctx context.Context) (*grounding.Graph, int64, error)
	// Learn validates the fill cand proposes for gap against the live graph
	// and writes it, stamped LEARNED, whole or not at all. Refusals are the
	// grounding package's error types.
	Learn(ctx context.Context, gap grounding.Gap, cand grounding.Candidate) ([]grounding.Primitive, error)
}

// Guard is the grounding guard: the concept graph, the operator's edge
// policies and the placement check it caches per graph version.
type Guard struct {
	src      GraphSource
	policies *edgepolicy.Set
	log      func() *slog.Logger // the entrance's logger, which may be set after the guard

	mu          sync.Mutex
	validated   bool
	validatedAt int64
	orphans     []edgepolicy.Orphan
}

// NewGuard is the guard over src with the operator's policies (nil:
// none). Placements should be validated against the graph before serving;
// at run time a placement the graph no longer has makes every guarded
// action DENY until the operator fixes it, and is logged to log().
func NewGuard(src GraphSource, policies *edgepolicy.Set, log func() *slog.Logger) *Guard {
	return &Guard{src: src, policies: policies, log: log}
}

// Source is the concept graph the guard judges on.
func (gd *Guard) Source() GraphSource { return gd.src }

// Policies are the operator's edge policies; nil when none were loaded.
func (gd *Guard) Policies() *edgepolicy.Set { return gd.policies }

// Layers are the guard's gate layers: grounding, and edge_policies when
// there are policies. Both judge only actions that name concepts.
func (gd *Guard) Layers() []Layer {
	if gd.policies == nil {
		return []Layer{groundingLayer{gd}}
	}
	return []Layer{groundingLayer{gd}, policyLayer{gd}}
}

// orphansAt validates the policy placements against g once per graph
// version. A graph that moved on can strand a placement (a re-ingested
// document dropped its edge); the policy could then never fire, so the
// caller fails closed instead of silently losing the protection.
func (gd *Guard) orphansAt(g *grounding.Graph, version int64) []edgepolicy.Orphan {
	gd.mu.Lock()
	defer gd.mu.Unlock()
	if gd.validated && gd.validatedAt == version {
		return gd.orphans
	}
	gd.orphans, gd.validatedAt, gd.validated = gd.policies.Validate(g), version, true
	if len(gd.orphans) > 0 {
		gd.log().Error("edge policies no longer match the concept graph; guarded actions are denied until fixed",
			"graph_version", version, "orphans", edgepolicy.FormatOrphans(gd.orphans))
	}
	return gd.orphans
}

// GuardAction is what an action says to the guard, decoded by the
// entrance.
type GuardAction struct {
	Concepts    []string
	MinDepth    *int
	Cardinality string         // "" when the caller did not say
	ToolName    string         // "" when the caller did not say
	Arguments   map[string]any // nil when the caller sent none; numbers as json.Number
}

// GuardActionKeys are the action fields the guard layers read.
var GuardActionKeys = []string{"concepts", "cardinality", "tool_name", "arguments", "min_depth"}

// GuardCall is the guard's view of one call: the action's guard fields,
// and the grounding check computed once and shared by the grounding and
// edge-policy layers, so both judge the same graph version and trace.
type GuardCall struct {
	Act GuardAction

	once    sync.Once
	graph   *grounding.Graph
	version int64
	result  grounding.Result
	err     error
}

// NewGuardCall is the guard's share of a call whose action is act.
func NewGuardCall(act GuardAction) *GuardCall { return &GuardCall{Act: act} }

// GraphVersion is the concept-graph version the call was judged on; 0
// before a layer checked it.
func (c *GuardCall) GraphVersion() int64 {
	if c == nil || c.graph == nil {
		return 0
	}
	return c.version
}

// Checked reports whether a layer read the graph for this call.
func (c *GuardCall) Checked() bool { return c != nil && c.graph != nil }

func (c *GuardCall) check(ctx context.Context, src GraphSource) error {
	c.once.Do(func() {
		c.graph, c.version, c.err = src.Graph(ctx)
		if c.err == nil {
			c.result, c.err = c.graph.Check(c.Act.Concepts, c.Act.MinDepth)
		}
	})
	return c.err
}
