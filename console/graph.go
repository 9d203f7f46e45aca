package console

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/grounding"
)

// maxDrawn bounds the concepts drawn; a larger graph is listed, not drawn.
const maxDrawn = 150

type graphData struct {
	Version    int64
	Concepts   int
	Drawing    string
	Truncated  bool
	Placements []edgepolicy.Orphan // every policy's placement (see placements)
	Relations  []string            // every relation, as text
	Query      string
	MinDepth   string
	Result     *grounding.Result
	Trace      string
	Err        string
}

func (c *Console) graph(w http.ResponseWriter, r *http.Request, s *session) {
	if c.cfg.Graph == nil {
		c.errorPage(w, r, http.StatusNotFound, "No concept graph", "This server has no concept graph configured.")
		return
	}
	g, version, err := c.cfg.Graph(r.Context())
	if err != nil {
		c.errorPage(w, r, http.StatusInternalServerError, "Concept graph unavailable", err.Error())
		return
	}
	d := graphData{Version: version, Concepts: g.Len(), Placements: placements(c.cfg.Policies),
		Query: strings.TrimSpace(r.URL.Query().Get("q")), MinDepth: r.URL.Query().Get("min_depth")}
	d.Drawing, d.Truncated, d.Relations = drawConceptGraph(g, d.Placements)
	if d.Query != "" {
		c.groundQuery(g, &d)
	}
	c.render(w, r, http.StatusOK, "graph", signedIn(s, "graph", "Concept graph", d))
}

// groundQuery runs the grounding engine on the query's concepts.
func (c *Console) groundQuery(g *grounding.Graph, d *graphData) {
	var concepts []string
	for _, s := range strings.Split(d.Query, ",") {
		if s = strings.TrimSpace(s); s != "" {
			concepts = append(concepts, s)
		}
	}
	var minDepth *int
	if d.MinDepth != "" {
		n, err := strconv.Atoi(d.MinDepth)
		if err != nil || n < 0 || n > int(grounding.MaxLevel) {
			d.Err = "min_depth must be a level from 0 to 4"
			return
		}
		minDepth = &n
	}
	res, err := g.Check(concepts, minDepth)
	if err != nil {
		d.Err = err.Error()
		return
	}
	d.Result = &res
	d.Trace = drawTrace(res)
}

// placements lists every edge policy's placement. edgepolicy.Set exposes
// placements only through Validate, which reports the policies whose edge
// a graph lacks: against a graph with every primitive and no edge, every
// policy is reported, with its source, target and source depth.
func placements(set *edgepolicy.Set) []edgepolicy.Orphan {
	if set == nil {
		return nil
	}
	return set.Validate(noEdges{})
}

type noEdges struct{}

func (noEdges) HasPrimitive(string) bool              { return true }
func (noEdges) HasAppliesTo(string, string, int) bool { return false }

// policiesOn returns the ids of the policies placed on an APPLIES_TO edge.
func policiesOn(ps []edgepolicy.Orphan, source, target string, depth int) []string {
	var out []string
	for _, p := range ps {
		if grounding.Fold(p.Source) == grounding.Fold(source) && grounding.Fold(p.Target) == grounding.Fold(target) && p.SourceDepth == depth {
			out = append(out, p.PolicyID)
		}
	}
	return out
}

// drawNode and drawEdge are the drawing's vocabulary, shared by the graph
// and the grounding trace.
type drawNode struct {
	Name   string
	Levels [5]bool // depths present (and grounding)
	Class  string
	Note   string
}

type drawEdge struct {
	From, To string
	Label    string
	Class    string
	Title    string
}

func drawConceptGraph(g *grounding.Graph, ps []edgepolicy.Orphan) (string, bool, []string) {
	nodes, edges, truncated := conceptDrawing(g, ps)
	var rels []string
	for _, e := range edges {
		rels = append(rels, e.Title)
	}
	return drawGraph(nodes, edges, "Concept graph", "Concepts as boxes (the squares are depths D0 to D4, filled where known), relations as arrows; APPLIES_TO edges that carry edge policies are drawn thick and name them."), truncated, rels
}

// conceptDrawing turns the graph into boxes and arrows: the first
// maxDrawn concepts by name, their relations among them, and the
// policies placed on each APPLIES_TO edge.
func conceptDrawing(g *grounding.Graph, ps []edgepolicy.Orphan) ([]drawNode, []drawEdge, bool) {
	prims := g.Primitives()
	slices.SortFunc(prims, func(a, b grounding.Primitive) int { return strings.Compare(a.Name, b.Name) })
	truncated := len(prims) > maxDrawn
	prims = prims[:min(len(prims), maxDrawn)]
	names := map[string]string{}
	for _, p := range prims {
		names[p.ID] = p.Name
	}
	var nodes []drawNode
	var edges []drawEdge
	for _, p := range prims {
		n := drawNode{Name: p.Name, Class: "node"}
		for _, d := range p.Depths {
			if d.Level.Valid() && d.Grounds() {
				n.Levels[d.Level] = true
			}
			for _, rel := range d.Relata {
				target, ok := names[rel.TargetID]
				if !ok {
					continue
				}
				e := drawEdge{From: p.Name, To: target, Class: "edge",
					Label: fmt.Sprintf("%s D%d→D%d", rel.RelationType, d.Level, rel.TargetDepth)}
				e.Title = fmt.Sprintf("%s %s %s at D%d (target D%d)", p.Name, rel.RelationType, target, d.Level, rel.TargetDepth)
				if rel.RelationType == grounding.AppliesTo {
					e.Class = "edge applies"
					if ids := policiesOn(ps, p.Name, target, int(d.Level)); len(ids) > 0 {
						e.Class = "edge applies policy"
						e.Label += " ⚖ " + strings.Join(ids, ", ")
						e.Title += "; policies: " + strings.Join(ids, ", ")
					}
				}
				edges = append(edges, e)
			}
		}
		nodes = append(nodes, n)
	}
	return nodes, edges, truncated
}

// drawTrace draws a grounding result: the query's concepts, the frontier
// the engine justified and its visible steps, and the gaps' concepts.
func drawTrace(res grounding.Result) string {
	nodes, edges := traceDrawing(res)
	return drawGraph(nodes, edges, "Grounding trace", "The query's concepts (outlined), the justified frontier and its steps; concepts with a gap are drawn dashed in red.")
}

// traceDrawing turns a grounding result into boxes and arrows.
func traceDrawing(res grounding.Result) ([]drawNode, []drawEdge) {
	var nodes []drawNode
	seen := map[string]bool{}
	query := map[string]bool{}
	for _, n := range res.Resolved {
		query[grounding.Fold(n)] = true
	}
	for _, p := range res.Trace.Result.Primitives {
		n := drawNode{Name: p.Name, Class: "node"}
		if query[grounding.Fold(p.Name)] {
			n.Class = "node query"
		}
		for _, d := range p.Depths {
			if d.Level.Valid() {
				n.Levels[d.Level] = true
			}
		}
		nodes = append(nodes, n)
		seen[p.Name] = true
	}
	for _, gp := range res.Gaps {
		name := gp.Subject()
		if name == "" || seen[name] {
			for i := range nodes {
				if nodes[i].Name == name {
					nodes[i].Class += " gap"
					nodes[i].Note = string(gp.Kind)
				}
			}
			continue
		}
		seen[name] = true
		nodes = append(nodes, drawNode{Name: name, Class: "node gap", Note: string(gp.Kind)})
	}
	var edges []drawEdge
	for _, st := range res.Trace.Result.Pathway {
		e := drawEdge{From: st.Source, To: st.Target, Class: "edge",
			Label: fmt.Sprintf("%s D%d→D%d", st.RelationType, st.SourceDepth, st.TargetDepth)}
		if st.RelationType == grounding.AppliesTo {
			e.Class = "edge applies"
		}
		e.Title = e.Label
		edges = append(edges, e)
	}
	for _, gp := range res.Gaps {
		if gp.Kind == grounding.RelationalGap && seen[gp.Source] && seen[gp.Target] {
			edges = append(edges, drawEdge{From: gp.Source, To: gp.Target, Class: "edge gap", Label: "gap", Title: gp.Render()})
		}
	}
	return nodes, edges
}
