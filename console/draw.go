package console

import (
	"fmt"
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
// layers) and draws them with their edges as SVG.
func drawGraph(nodes []drawNode, edges []drawEdge, title, desc string) string {
	edges = mergeEdges(edges)
	col := layers(nodes, edges)
	byCol := map[int][]int{}
	maxCol := 0
	for i := range nodes {
		byCol[col[nodes[i].Name]] = append(byCol[col[nodes[i].Name]], i)
		maxCol = max(maxCol, col[nodes[i].Name])
	}
	pos := map[string][2]int{}
	widest := 1
	for c := 0; c <= maxCol; c++ {
		for r, i := range byCol[c] {
			pos[nodes[i].Name] = [2]int{margin + r*(nodeW+colGap), margin + c*(nodeH+rowGap)}
		}
		widest = max(widest, len(byCol[c]))
	}
	w := 2*margin + widest*(nodeW+colGap) + 60 // room for back edges on the right
	h := 2*margin + (maxCol+1)*(nodeH+rowGap) - rowGap
	var b strings.Builder
	id := strings.ToLower(strings.ReplaceAll(title, " ", "-"))
	fmt.Fprintf(&b, `<svg class="graph" viewBox="0 0 %d %d" width="%d" role="img" aria-labelledby="%s-t %s-d" xmlns="http://www.w3.org/2000/svg">`, w, h, w, id, id)
	fmt.Fprintf(&b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, id, esc(title), id, esc(desc))
	b.WriteString(`<defs><marker id="` + id + `-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrow"/></marker></defs>`)
	for _, e := range edges {
		drawArrow(&b, e, pos, id)
	}
	for _, n := range nodes {
		drawBox(&b, n, pos[n.Name])
	}
	b.WriteString(`</svg>`)
	return b.String()
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

func drawArrow(b *strings.Builder, e drawEdge, pos map[string][2]int, id string) {
	from, ok1 := pos[e.From]
	to, ok2 := pos[e.To]
	if !ok1 || !ok2 {
		return
	}
	var d string
	var lx, ly float64
	if to[1] > from[1] { // downwards: bottom centre to top centre
		x1, y1 := float64(from[0]+nodeW/2), float64(from[1]+nodeH)
		x2, y2 := float64(to[0]+nodeW/2), float64(to[1])
		dy := (y2 - y1) / 2
		d = fmt.Sprintf("M %.1f %.1f C %.1f %.1f, %.1f %.1f, %.1f %.1f", x1, y1, x1, y1+dy, x2, y2-dy, x2, y2)
		lx, ly = x1+(x2-x1)*0.35+4, y1+(y2-y1)*0.35
	} else { // same row or upwards (a cycle): out of the right side and back
		x1, y1 := float64(from[0]+nodeW), float64(from[1]+nodeH/2)
		x2, y2 := float64(to[0]+nodeW), float64(to[1]+nodeH/2)
		bulge := max(x1, x2) + 40
		d = fmt.Sprintf("M %.1f %.1f C %.1f %.1f, %.1f %.1f, %.1f %.1f", x1, y1, bulge, y1, bulge, y2, x2, y2)
		lx, ly = bulge-30, (y1+y2)/2
	}
	fmt.Fprintf(b, `<g class="%s"><title>%s</title><path d="%s" marker-end="url(#%s-arrow)"/>`, esc(e.Class), esc(e.Title), d, id)
	// Only APPLIES_TO and gap edges are labelled in the drawing (the
	// others' labels would pile up where arrows leave a concept); every
	// arrow names itself in its tooltip, and the page lists them as text.
	if strings.Contains(e.Class, "applies") || strings.Contains(e.Class, "gap") {
		fmt.Fprintf(b, `<text class="edge-label" x="%.1f" y="%.1f">%s</text>`, lx, ly, esc(e.Label))
	}
	b.WriteString(`</g>`)
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
