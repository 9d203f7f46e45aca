package console

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Layout geometry of graph drawings: layers are rows, top to bottom
// (concept graphs are deeper than they are wide).
const (
	nodeW, nodeH = 150, 46
	colGap       = 40
	rowGap       = 70
	margin       = 20
)

// drawGraph lays nodes out in rows by longest path along the edges (see
// layers), places the edge labels where no two overlap (see placeLabels)
// and draws it all as SVG.
func drawGraph(nodes []drawNode, edges []drawEdge, title, desc string) string {
	lay := layoutGraph(nodes, edges)
	var b strings.Builder
	id := strings.ToLower(strings.ReplaceAll(title, " ", "-"))
	fmt.Fprintf(&b, `<svg class="graph" viewBox="0 0 %d %d" width="%d" role="img" aria-labelledby="%s-t %s-d" xmlns="http://www.w3.org/2000/svg">`, lay.W, lay.H, lay.W, id, id)
	fmt.Fprintf(&b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, id, esc(title), id, esc(desc))
	b.WriteString(`<defs><marker id="` + id + `-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrow"/></marker></defs>`)
	for i, e := range lay.Edges {
		drawArrow(&b, e, lay.Paths[i], id)
	}
	for _, n := range nodes {
		drawBox(&b, n, lay.Pos[n.Name])
	}
	// Labels go on top of every arrow and box, so no later stroke crosses
	// their text.
	for i, e := range lay.Edges {
		drawLabel(&b, e, lay.Labels[i])
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// graphLayout is where everything of a drawing goes: node corners, each
// (merged) edge's path, and its label's box (zero when unlabelled).
type graphLayout struct {
	W, H   int
	Pos    map[string][2]int
	Edges  []drawEdge
	Paths  []edgePath
	Labels []labelBox
}

// layoutGraph places the nodes in rows, routes the edges and places their
// labels; the drawing widens to the right when a label needs the room.
func layoutGraph(nodes []drawNode, edges []drawEdge) graphLayout {
	edges = mergeEdges(edges)
	col := layers(nodes, edges)
	byCol := map[int][]int{}
	maxCol := 0
	for i := range nodes {
		byCol[col[nodes[i].Name]] = append(byCol[col[nodes[i].Name]], i)
		maxCol = max(maxCol, col[nodes[i].Name])
	}
	lay := graphLayout{Pos: map[string][2]int{}, Edges: edges}
	widest := 1
	for c := 0; c <= maxCol; c++ {
		for r, i := range byCol[c] {
			lay.Pos[nodes[i].Name] = [2]int{margin + r*(nodeW+colGap), margin + c*(nodeH+rowGap)}
		}
		widest = max(widest, len(byCol[c]))
	}
	lay.W = 2*margin + widest*(nodeW+colGap) + 60 // room for back edges on the right
	lay.H = 2*margin + (maxCol+1)*(nodeH+rowGap) - rowGap
	lay.Paths = make([]edgePath, len(edges))
	for i, e := range edges {
		lay.Paths[i] = routeEdge(e, lay.Pos)
	}
	lay.Labels = placeLabels(nodes, edges, lay.Paths, lay.Pos)
	for _, l := range lay.Labels {
		lay.W = max(lay.W, int(math.Ceil(l.X+l.W))+margin)
		lay.H = max(lay.H, int(math.Ceil(l.Y+l.H))+margin)
	}
	return lay
}

// edgePath is an edge's Bézier path and the point its label belongs near.
type edgePath struct {
	D      string
	Ok     bool
	AX, AY float64
}

func routeEdge(e drawEdge, pos map[string][2]int) edgePath {
	from, ok1 := pos[e.From]
	to, ok2 := pos[e.To]
	if !ok1 || !ok2 {
		return edgePath{}
	}
	if to[1] > from[1] { // downwards: bottom centre to top centre
		x1, y1 := float64(from[0]+nodeW/2), float64(from[1]+nodeH)
		x2, y2 := float64(to[0]+nodeW/2), float64(to[1])
		dy := (y2 - y1) / 2
		return edgePath{Ok: true, D: fmt.Sprintf("M %.1f %.1f C %.1f %.1f, %.1f %.1f, %.1f %.1f", x1, y1, x1, y1+dy, x2, y2-dy, x2, y2),
			AX: x1 + (x2-x1)*0.35 + 4, AY: y1 + (y2-y1)*0.35}
	}
	// Same row or upwards (a cycle): out of the right side and back.
	x1, y1 := float64(from[0]+nodeW), float64(from[1]+nodeH/2)
	x2, y2 := float64(to[0]+nodeW), float64(to[1]+nodeH/2)
	bulge := max(x1, x2) + 40
	return edgePath{Ok: true, D: fmt.Sprintf("M %.1f %.1f C %.1f %.1f, %.1f %.1f, %.1f %.1f", x1, y1, bulge, y1, bulge, y2, x2, y2),
		AX: bulge - 30, AY: (y1 + y2) / 2}
}

// Edge label metrics at the stylesheet's 10 px: a generous average glyph
// width (labels are mostly capitals and digits), so the boxes that keep
// labels apart are never smaller than the text drawn.
const (
	labelCharW = 7.0
	labelLineH = 12.0
	labelPad   = 2.0
)

// labelBox is a placed label: its lines and the box they fill (X, Y the
// top left corner), with the point of its edge it belongs to.
type labelBox struct {
	Lines      []string
	X, Y, W, H float64
	AX, AY     float64
}

func (a labelBox) overlaps(b labelBox) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

// labelled says which edges carry a label in the drawing: APPLIES_TO and
// gap edges (the others' labels would pile up where arrows leave a
// concept); every arrow names itself in its tooltip, and the page lists
// them as text.
func labelled(e drawEdge) bool {
	return strings.Contains(e.Class, "applies") || strings.Contains(e.Class, "gap")
}

// labelLines breaks a label where a reader would: one line per merged
// relation, and the policies an edge carries on a line of their own.
func labelLines(label string) []string {
	var out []string
	for _, part := range strings.Split(label, "; ") {
		rel, pols, ok := strings.Cut(part, " ⚖ ")
		out = append(out, rel)
		if ok {
			out = append(out, "⚖ "+pols)
		}
	}
	return out
}

// placeLabels puts each label near its edge where it overlaps no node and
// no label placed before it: the first free spot among small moves around
// the edge's anchor, else the first free spot sliding right, which always
// exists (beyond everything drawn), so no two labels ever overlap.
func placeLabels(nodes []drawNode, edges []drawEdge, paths []edgePath, pos map[string][2]int) []labelBox {
	var taken []labelBox
	for _, n := range nodes {
		p := pos[n.Name]
		taken = append(taken, labelBox{X: float64(p[0]) - labelPad, Y: float64(p[1]) - labelPad, W: nodeW + 2*labelPad, H: nodeH + 2*labelPad})
	}
	blocker := func(b labelBox) (labelBox, bool) {
		for _, t := range taken {
			if b.overlaps(t) {
				return t, true
			}
		}
		return labelBox{}, false
	}
	out := make([]labelBox, len(edges))
	for i, e := range edges {
		if !paths[i].Ok || !labelled(e) {
			continue
		}
		b := labelBox{Lines: labelLines(e.Label), AX: paths[i].AX, AY: paths[i].AY}
		for _, l := range b.Lines {
			b.W = max(b.W, float64(len([]rune(l)))*labelCharW+2*labelPad)
		}
		b.H = float64(len(b.Lines))*labelLineH + 2*labelPad
		out[i] = settle(b, blocker)
		taken = append(taken, out[i])
	}
	return out
}

// settle moves b from its anchor to the first free spot: small steps
// around it first, then rightwards past whatever blocks it, which ends
// (there is nothing right of everything drawn).
func settle(b labelBox, blocker func(labelBox) (labelBox, bool)) labelBox {
	at := func(dx, dy float64) labelBox {
		c := b
		c.X, c.Y = b.AX+dx, b.AY-labelLineH+dy
		return c
	}
	for _, dy := range []float64{0, 14, -14, 28, -28} {
		for dx := 0.0; dx <= 120; dx += 20 {
			if c := at(dx, dy); c.X >= 0 && c.Y >= 0 {
				if _, blocked := blocker(c); !blocked {
					return c
				}
			}
		}
	}
	for dx := 140.0; ; {
		c := at(dx, 0)
		t, blocked := blocker(c)
		if !blocked {
			return c
		}
		dx = t.X + t.W - b.AX + 1
	}
}

// layers gives each node a column: the length of the longest path reaching
// it once the edges that close a cycle (back edges of a depth-first walk in
// name order) are set aside, with empty columns squeezed out. Concept
// graphs have cycles (file CONSTRAINED_BY permission, permission
// APPLIES_TO file), which plain longest-path layering would stretch to
// the node count.
func layers(nodes []drawNode, edges []drawEdge) map[string]int {
	out := map[string][]string{}
	known := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		known[n.Name] = true
	}
	for _, e := range edges {
		if e.From != e.To && known[e.From] && known[e.To] {
			out[e.From] = append(out[e.From], e.To)
		}
	}
	back := backEdges(nodes, out)
	col := make(map[string]int, len(nodes))
	for range nodes { // a DAG settles within as many rounds as it has nodes
		moved := false
		for from, tos := range out {
			for _, to := range tos {
				if !back[[2]string{from, to}] && col[to] < col[from]+1 {
					col[to], moved = col[from]+1, true
				}
			}
		}
		if !moved {
			break
		}
	}
	return squeeze(nodes, col)
}

// backEdges finds the edges that close cycles, walking depth-first from
// each node in the given order.
func backEdges(nodes []drawNode, out map[string][]string) map[[2]string]bool {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	back := map[[2]string]bool{}
	var walk func(string)
	walk = func(n string) {
		state[n] = onPath
		for _, m := range out[n] {
			switch state[m] {
			case onPath:
				back[[2]string{n, m}] = true
			case unseen:
				walk(m)
			}
		}
		state[n] = done
	}
	for _, n := range nodes {
		if state[n.Name] == unseen {
			walk(n.Name)
		}
	}
	return back
}

// squeeze renumbers the columns in use as 0, 1, 2, …
func squeeze(nodes []drawNode, col map[string]int) map[string]int {
	used := map[int]bool{}
	for _, n := range nodes {
		used[col[n.Name]] = true
	}
	var order []int
	for c := range used {
		order = append(order, c)
	}
	slices.Sort(order)
	rank := make(map[int]int, len(order))
	for i, c := range order {
		rank[c] = i
	}
	for _, n := range nodes {
		col[n.Name] = rank[col[n.Name]]
	}
	return col
}

func drawArrow(b *strings.Builder, e drawEdge, p edgePath, id string) {
	if p.Ok {
		fmt.Fprintf(b, `<g class="%s"><title>%s</title><path d="%s" marker-end="url(#%s-arrow)"/></g>`, esc(e.Class), esc(e.Title), p.D, id)
	}
}

// drawLabel writes a placed label, one tspan a line, on a pale box that
// hides the arrows behind it, in its edge's class (for its colour); a label moved away from its edge is tied to it by a
// thin leader.
func drawLabel(b *strings.Builder, e drawEdge, l labelBox) {
	if len(l.Lines) == 0 {
		return
	}
	fmt.Fprintf(b, `<g class="%s"><title>%s</title>`, esc(e.Class), esc(e.Title))
	if math.Hypot(l.X-l.AX, l.Y+labelLineH-l.AY) > 24 {
		fmt.Fprintf(b, `<line class="leader" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, l.AX, l.AY, l.X, l.Y+l.H/2)
	}
	fmt.Fprintf(b, `<rect class="label-bg" x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="2"/>`, l.X, l.Y, l.W, l.H)
	fmt.Fprintf(b, `<text class="edge-label" x="%.1f" y="%.1f">`, l.X+labelPad, l.Y+labelPad+labelLineH-2)
	for i, line := range l.Lines {
		dy := 0.0
		if i > 0 {
			dy = labelLineH
		}
		fmt.Fprintf(b, `<tspan x="%.1f" dy="%.1f">%s</tspan>`, l.X+labelPad, dy, esc(line))
	}
	b.WriteString(`</text></g>`)
}

func drawBox(b *strings.Builder, n drawNode, p [2]int) {
	fmt.Fprintf(b, `<g class="%s"><title>%s</title><rect x="%d" y="%d" width="%d" height="%d" rx="6"/>`, esc(n.Class), esc(n.Name+noteSuffix(n.Note)), p[0], p[1], nodeW, nodeH)
	fmt.Fprintf(b, `<text class="node-name" x="%d" y="%d">%s</text>`, p[0]+8, p[1]+18, esc(clip(n.Name+noteSuffix(n.Note), 22)))
	for l, on := range n.Levels {
		cls := "level"
		if on {
			cls = "level on"
		}
		fmt.Fprintf(b, `<rect class="%s" x="%d" y="%d" width="12" height="12"><title>D%d %s</title></rect>`, cls, p[0]+8+l*16, p[1]+26, l, map[bool]string{true: "known", false: "not known"}[on])
	}
	b.WriteString(`</g>`)
}

func noteSuffix(note string) string {
	if note == "" {
		return ""
	}
	return " (" + note + ")"
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// mergeEdges draws the relations between one pair of concepts as one
// arrow carrying all their labels, styled as the weightiest of them (a
// policy edge, then APPLIES_TO), so parallel arrows do not stack labels.
func mergeEdges(edges []drawEdge) []drawEdge {
	weight := func(class string) int {
		switch {
		case strings.Contains(class, "policy"):
			return 3
		case strings.Contains(class, "gap"):
			return 2
		case strings.Contains(class, "applies"):
			return 1
		}
		return 0
	}
	var out []drawEdge
	at := map[[2]string]int{}
	for _, e := range edges {
		k := [2]string{e.From, e.To}
		i, ok := at[k]
		if !ok {
			at[k] = len(out)
			out = append(out, e)
			continue
		}
		m := &out[i]
		m.Label += "; " + e.Label
		m.Title += "\n" + e.Title
		if weight(e.Class) > weight(m.Class) {
			m.Class = e.Class
		}
	}
	return out
}
