package grounding

import (
	"fmt"
	"strings"
)

// frame is one step of the cycle search: the node and the index of the
// out-edge being followed.
type frame struct{ node, edge int }

// checkCycles looks for a transitive cycle through any revised node. The
// graph before the change was acyclic, so every new cycle passes through a
// revised node and a DFS from those nodes finds it in O(nodes+edges).
func (ng *Graph) checkCycles(revised []int, batch map[int]int) *GraphError {
	const white, grey, black = 0, 1, 2
	color := make([]uint8, len(ng.nodes))
	for _, start := range revised {
		if color[start] != white {
			continue
		}
		stack := []frame{{start, -1}}
		color[start] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			next, ok := ng.nextTransitive(top.node, top.edge+1)
			if !ok {
				color[top.node] = black
				stack = stack[:len(stack)-1]
				continue
			}
			top.edge = next
			t := ng.nodes[top.node].out[next].target
			switch color[t] {
			case grey:
				return ng.cycleError(stack, t, batch)
			case white:
				color[t] = grey
				stack = append(stack, frame{t, -1})
			}
		}
	}
	return nil
}

// nextTransitive finds the first transitive out-edge of n at index >= from.
func (ng *Graph) nextTransitive(n, from int) (int, bool) {
	out := ng.nodes[n].out
	for i := from; i < len(out); i++ {
		if out[i].typ.Transitive() {
			return i, true
		}
	}
	return 0, false
}

// cycleError reports the cycle on the first of its edges that belongs to a
// revised primitive, naming the whole loop so the author sees what closes it.
func (ng *Graph) cycleError(stack []frame, closing int, batch map[int]int) *GraphError {
	start := 0
	for stack[start].node != closing {
		start++
	}
	loop := stack[start:]
	names := make([]string, 0, len(loop)+1)
	for _, f := range loop {
		names = append(names, ng.nodes[f.node].prim.Name)
	}
	names = append(names, ng.nodes[closing].prim.Name)
	blame := loop[0]
	for _, f := range loop {
		if _, ok := batch[f.node]; ok {
			blame = f
			break
		}
	}
	n := ng.nodes[blame.node]
	e := n.out[blame.edge]
	return &GraphError{
		rev: batch[blame.node], Path: fmt.Sprintf(".depths[%d].relata[%d]", e.depth, e.rel),
		Primitive: n.prim.Name, Depth: int(e.sd), Rule: RuleCycle,
		Detail: fmt.Sprintf("%s %q closes a transitive cycle: %s", e.typ, ng.nodes[e.target].prim.Name, strings.Join(names, " → ")),
	}
}
