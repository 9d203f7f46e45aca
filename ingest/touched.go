package ingest

import "hash/maphash"

// Bounds of a run's record of touched propositions: a stream may touch
// more propositions than memory holds ids.
const (
	maxTracked = 1 << 20 // distinct propositions counted exactly
	maxListed  = 10_000  // ids kept, in first-touched order, for the warrant report
)

// propSet counts the distinct propositions a run touched, in bounded
// memory: it keeps 64-bit hashes of the ids (a collision, at odds of about
// n²/2⁶⁵, would undercount by one), at most maxTracked of them, after
// which the count is a lower bound (capped), and the first maxListed ids.
type propSet struct {
	seed   maphash.Seed
	seen   map[uint64]struct{}
	first  []string
	capped bool
}

func newPropSet() *propSet {
	return &propSet{seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}}
}

func (p *propSet) add(id string) {
	h := maphash.String(p.seed, id)
	if _, ok := p.seen[h]; ok {
		return
	}
	if len(p.seen) == maxTracked {
		p.capped = true
		return
	}
	p.seen[h] = struct{}{}
	if len(p.first) < maxListed {
		p.first = append(p.first, string([]byte(id))) // not a view into the decoded text
	}
}

func (p *propSet) count() int { return len(p.seen) }
