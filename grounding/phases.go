package grounding

// orderedMax maps a key to the highest value recorded for it, remembering
// first-insertion order: a later raise keeps the entry's position (§2.7).
type orderedMax[K comparable] struct {
	keys []K
	val  map[K]int
}

func (m *orderedMax[K]) raise(k K, v int) {
	if m.val == nil {
		m.val = map[K]int{}
	}
	old, ok := m.val[k]
	if !ok {
		m.keys = append(m.keys, k)
		m.val[k] = v
		return
	}
	m.val[k] = max(old, v)
}

// existenceGaps is phase 1: one gap per transient, in all_nodes order,
// which for transients is input order.
func (e *engine) existenceGaps() []Gap {
	var out []Gap
	for i := range e.nodes {
		if e.nodes[i].transient() {
			out = append(out, newExistenceGap(e.nodes[i].name))
		}
	}
	return out
}

// depthGaps is phase 2: a source must be contiguously grounded to the
// deepest gated frontier edge it holds; min_depth adds a floor for known
// roots (in root order) and can only raise a requirement.
func (e *engine) depthGaps(minDepth *int) []Gap {
	var req orderedMax[int]
	for _, ei := range e.gated {
		if ed := e.edges[ei]; !e.nodes[ed.src].transient() {
			req.raise(ed.src, int(ed.sd))
		}
	}
	if minDepth != nil {
		for _, r := range e.roots {
			if n := &e.nodes[r]; !n.transient() && n.cmax < *minDepth {
				req.raise(r, *minDepth)
			}
		}
	}
	var out []Gap
	for _, i := range req.keys {
		n := &e.nodes[i]
		out = append(out, newDepthGap(n.name, n.mask, n.cmax, req.val[i]))
	}
	return out
}

// relationalGaps is phase 3: a visible edge demands that its target be
// contiguously grounded to the edge's target depth; per (source, target)
// pair the deepest demand wins.
func (e *engine) relationalGaps() []Gap {
	type pair struct{ src, dst int }
	var req orderedMax[pair]
	for _, ei := range e.visible {
		ed := e.edges[ei]
		t := &e.nodes[ed.dst]
		if t.transient() || t.cmax >= int(ed.td) {
			continue
		}
		req.raise(pair{ed.src, ed.dst}, int(ed.td))
	}
	var out []Gap
	for _, p := range req.keys {
		s, t := &e.nodes[p.src], &e.nodes[p.dst]
		out = append(out, newRelationalGap(s.name, t.name, t.mask, t.cmax, req.val[p]))
	}
	return out
}

// reachabilityGaps is phase 4: with two or more known roots, the root with
// the largest undirected component over visible frontier edges is the
// anchor (ties to the earliest root); every known root outside its
// component is reported, in root order.
func (e *engine) reachabilityGaps() []Gap {
	var known []int
	for _, r := range e.roots {
		if !e.nodes[r].transient() {
			known = append(known, r)
		}
	}
	if len(known) < 2 {
		return nil
	}
	uf := newUnionFind(len(e.nodes))
	for _, ei := range e.visible {
		uf.union(e.edges[ei].src, e.edges[ei].dst)
	}
	anchor := known[0]
	for _, r := range known[1:] {
		if uf.size(r) > uf.size(anchor) {
			anchor = r
		}
	}
	var out []Gap
	for _, r := range known {
		if uf.find(r) != uf.find(anchor) {
			out = append(out, newReachabilityGap(e.nodes[r].name))
		}
	}
	return out
}

// unionFind gives component sizes for the undirected reachability test.
type unionFind struct{ parent, sz []int }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int, n), sz: make([]int, n)}
	for i := range u.parent {
		u.parent[i], u.sz[i] = i, 1
	}
	return u
}

func (u *unionFind) find(x int) int {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

func (u *unionFind) union(a, b int) {
	a, b = u.find(a), u.find(b)
	if a == b {
		return
	}
	if u.sz[a] < u.sz[b] {
		a, b = b, a
	}
	u.parent[b] = a
	u.sz[a] += u.sz[b]
}

func (u *unionFind) size(x int) int { return u.sz[u.find(x)] }
