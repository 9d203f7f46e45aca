package grounding

import "fmt"

// GapKind discriminates the four gap types (spec §1.8).
type GapKind string

// The four gap kinds, in phase order.
const (
	ExistenceGap    GapKind = "EXISTENCE"
	DepthGap        GapKind = "DEPTH"
	RelationalGap   GapKind = "RELATIONAL"
	ReachabilityGap GapKind = "REACHABILITY"
)

// Gap is one reason a check is not grounded. Which fields are meaningful
// depends on Kind:
//
//	EXISTENCE     Primitive (the first input spelling)
//	DEPTH         Primitive, RequiredDepth, CurrentDepth, MissingLevels
//	RELATIONAL    Source, Target, RequiredDepth, CurrentDepth and
//	              MissingLevels (both of the target)
//	REACHABILITY  Primitive
//
// CurrentDepth nil means the contiguous max is "none". Primitives are named
// by stored name; learning resolves them against the live graph. Message is
// the one-line human rendering.
type Gap struct {
	Kind          GapKind
	Primitive     string
	Source        string
	Target        string
	RequiredDepth DepthLevel
	CurrentDepth  *DepthLevel
	MissingLevels []DepthLevel
	Message       string
}

// Subject is the primitive the gap is about: the target for RELATIONAL.
func (g Gap) Subject() string {
	if g.Kind == RelationalGap {
		return g.Target
	}
	return g.Primitive
}

// Render is the human one-liner of spec §1.8.
func (g Gap) Render() string {
	switch g.Kind {
	case ExistenceGap:
		return fmt.Sprintf("EXISTENCE: '%s' is not in the knowledge graph", g.Primitive)
	case DepthGap:
		return fmt.Sprintf("DEPTH: '%s' known to %s, requires %s", g.Primitive, levelLabel(g.CurrentDepth), g.RequiredDepth)
	case RelationalGap:
		return fmt.Sprintf("RELATIONAL: '%s' → '%s' requires %s on target, found %s",
			g.Source, g.Target, g.RequiredDepth, levelLabel(g.CurrentDepth))
	case ReachabilityGap:
		return fmt.Sprintf("REACHABILITY: '%s' is not connected to other concepts", g.Primitive)
	}
	return fmt.Sprintf("%s: unknown gap", g.Kind)
}

func newExistenceGap(name string) Gap {
	g := Gap{Kind: ExistenceGap, Primitive: name}
	g.Message = g.Render()
	return g
}

func newReachabilityGap(name string) Gap {
	g := Gap{Kind: ReachabilityGap, Primitive: name}
	g.Message = g.Render()
	return g
}

// newDepthGap derives missing levels from the primitive's grounding mask.
func newDepthGap(name string, mask uint8, current, required int) Gap {
	g := Gap{Kind: DepthGap, Primitive: name, RequiredDepth: DepthLevel(required),
		CurrentDepth: levelPtr(current), MissingLevels: missingLevels(mask, current, required)}
	g.Message = g.Render()
	return g
}

// newRelationalGap's current depth and missing levels are the target's.
func newRelationalGap(source, target string, mask uint8, current, required int) Gap {
	g := Gap{Kind: RelationalGap, Source: source, Target: target, RequiredDepth: DepthLevel(required),
		CurrentDepth: levelPtr(current), MissingLevels: missingLevels(mask, current, required)}
	g.Message = g.Render()
	return g
}
