package grounding

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// learnDepths fills holes in the chain of the named primitive (the gapped
// primitive for DEPTH, the target for RELATIONAL): validated against the
// live node, appended (never replacing), never above the required depth,
// and only if the result is contiguous through the highest new level.
func (g *Graph) learnDepths(what string, gap Gap, name string, cand Candidate, now time.Time) (Primitive, error) {
	if err := validateProposals(what, cand.NewDepths); err != nil {
		return Primitive{}, err
	}
	i, ok := g.byFold[Fold(name)]
	if !ok {
		return Primitive{}, invalidCandidate("Primitive '%s' not found", name)
	}
	live := &g.nodes[i]
	if live.cmax >= int(gap.RequiredDepth) {
		return Primitive{}, gapResolved("%s is already resolved: '%s' is contiguously grounded to %s and the gap requires %s",
			gapLabel(gap), live.prim.Name, levelLabel(levelPtr(live.cmax)), gap.RequiredDepth)
	}
	if err := validateFill(what, live, cand.NewDepths, int(gap.RequiredDepth)); err != nil {
		return Primitive{}, err
	}
	rev := live.prim.Clone()
	rev.Provenance.UpdatedAt = now.UTC()
	for _, pd := range cand.NewDepths {
		rev.Depths = append(rev.Depths, Depth{Level: pd.Level, Properties: pd.Properties.clone(), Relata: []Relatum{}, Provenance: stamp(Learned, now)})
	}
	slices.SortStableFunc(rev.Depths, func(a, b Depth) int { return int(a.Level) - int(b.Level) })
	return rev, nil
}

// validateProposals is the candidate's own check (spec §4.2 step 2), plus
// the rule that a proposed depth must say something: a propertyless depth
// would be stored yet not ground (vacuity rule), leaving the gap open.
func validateProposals(what string, nd []ProposedDepth) error {
	if len(nd) == 0 {
		return invalidCandidate("%s has no new depths", what)
	}
	for _, pd := range nd {
		if !pd.Level.Valid() {
			return invalidCandidate("%s proposes level %d, outside 0..4", what, int(pd.Level))
		}
		if len(pd.Properties) == 0 {
			return invalidCandidate("%s proposes %s with no properties; a depth without properties or relata does not count toward grounding", what, pd.Level)
		}
	}
	return nil
}

// validateFill checks proposals against every stored level of the live
// node (vacuous ones included, as in VRE), in the spec's order.
func validateFill(what string, live *gnode, nd []ProposedDepth, required int) error {
	present := live.prim.storedMask()
	var proposed uint8
	var dups []int
	top := 0
	for _, pd := range nd {
		if proposed&(1<<pd.Level) != 0 {
			dups = append(dups, int(pd.Level))
		}
		proposed |= 1 << pd.Level
		top = max(top, int(pd.Level))
	}
	if len(dups) > 0 {
		return invalidCandidate("%s proposes duplicate depth levels %s", what, levelList(dups))
	}
	if top > required {
		return invalidCandidate("%s proposes %s, above the depth the gap requires (%s); a fill may not escalate scope", what, DepthLevel(top), DepthLevel(required))
	}
	for _, pd := range nd {
		if present&(1<<pd.Level) != 0 {
			holes := missingLevels(present, live.cmax, required)
			return invalidCandidate("%s proposes %s, which is already grounded; fill only the missing levels %s", what, pd.Level, levelList(ints(holes)))
		}
	}
	union := present | proposed
	if contiguousMax(union) < top {
		return invalidCandidate("%s must form a contiguous chain through %s; fill the holes: %s", what, DepthLevel(top), levelList(ints(missingLevels(union, -1, top))))
	}
	return nil
}

func gapLabel(gap Gap) string {
	if gap.Kind == RelationalGap {
		return fmt.Sprintf("RelationalGap '%s' → '%s'", gap.Source, gap.Target)
	}
	return fmt.Sprintf("DepthGap on '%s'", gap.Primitive)
}

func ints(ls []DepthLevel) []int {
	out := make([]int, len(ls))
	for i, l := range ls {
		out[i] = int(l)
	}
	return out
}

// levelList renders levels like Python's list repr, e.g. "[2, 3]".
func levelList(ls []int) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmt.Sprint(l)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
