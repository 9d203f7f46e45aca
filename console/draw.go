package console

import (
	"fmt"
	"strings"
)

// Layout geometry of graph drawings.
const (
	nodeW, nodeH = 150, 46
	colGap       = 110
	rowGap       = 26
	margin       = 20
)

// drawGraph lays nodes out in columns by longest path along the edges
// (cycles are cut after as many rounds as there are nodes) and draws them
// with their edges as SVG.
func drawGraph(nodes []drawNode, edges []drawEdge, title, desc string) string {
	col := layers(nodes, edges)
	byCol := map[int][]int{}
	maxCol := 0
	for i := range nodes {
		byCol[col[nodes[i].Name]] = append(byCol[col[nodes[i].Name]], i)
		maxCol = max(maxCol, col[nodes[i].Name])
	}
	pos := map[string][2]int{}
	maxRows := 1
	for c := 0; c <= maxCol; c++ {
		for r, i := range byCol[c] {
			pos[nodes[i].Name] = [2]int{margin + c*(nodeW+colGap), margin + 20 + r*(nodeH+rowGap)}
		}
		maxRows = max(maxRows, len(byCol[c]))
	}
	w := 2*margin + (maxCol+1)*(nodeW+colGap) - colGap
	h := 2*margin + 20 + maxRows*(nodeH+rowGap)
	var b strings.Builder
	id := strings.ToLower(strings.ReplaceAll(title, " ", "-"))
	fmt.Fprintf(&b, `<svg class="graph" viewBox="0 0 %d %d" width="100%%" role="img" aria-labelledby="%s-t %s-d" xmlns="http://www.w3.org/2000/svg">`, w, h, id, id)
	fmt.Fprintf(&b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, id, esc(title), id, esc(desc))
	b.WriteString(`<defs><marker id="` + id + `-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" class="arrow"/></marker></defs>`)
	for _, e := range edges {
		drawArrow(&b, e, pos, id)
	}
	for _, n := range nodes {
		drawBox(&b, n, pos[n.Name])
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// layers gives each node the length of the longest edge path reaching it.
func layers(nodes []drawNode, edges []drawEdge) map[string]int {
	col := make(map[string]int, len(nodes))
	known := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		known[n.Name] = true
	}
	for round := 0; round < len(nodes); round++ {
		moved := false
		for _, e := range edges {
			if e.From == e.To || !known[e.From] || !known[e.To] {
				continue
			}
			if col[e.To] < col[e.From]+1 {
				col[e.To] = col[e.From] + 1
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	// Keep drawings narrow: a column index beyond the node count means a
	// cycle was cut; clamp it.
	for k, v := range col {
		col[k] = min(v, len(nodes))
	}
	return col
}

func drawArrow(b *strings.Builder, e drawEdge, pos map[string][2]int, id string) {
	from, ok1 := pos[e.From]
	to, ok2 := pos[e.To]
	if !ok1 || !ok2 {
		return
	}
	x1, y1 := float64(from[0]+nodeW), float64(from[1]+nodeH/2)
	x2, y2 := float64(to[0]), float64(to[1]+nodeH/2)
	if to[0] <= from[0] { // same column or backwards: loop around the right
		x2 = float64(to[0] + nodeW)
	}
	dx := max((x2-x1)/2, 40)
	fmt.Fprintf(b, `<g class="%s"><title>%s</title><path d="M %.1f %.1f C %.1f %.1f, %.1f %.1f, %.1f %.1f" marker-end="url(#%s-arrow)"/>`,
		esc(e.Class), esc(e.Title), x1, y1, x1+dx, y1, x2-dx, y2, x2, y2, id)
	fmt.Fprintf(b, `<text class="edge-label" x="%.1f" y="%.1f">%s</text></g>`, (x1+x2)/2, (y1+y2)/2-4, esc(e.Label))
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
