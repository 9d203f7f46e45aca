package warrant

import (
	"math"
	"math/big"
)

// Evaluate computes the WarrantView of v at evaluatedAt under reference-v2.
// evaluatedAt must be a parseable instant (§3); it is echoed exactly as
// given. Evaluate is deterministic and never reads a clock.
func Evaluate(v *View, evaluatedAt string) (*WarrantView, error) {
	t, ok := ParseInstant(evaluatedAt)
	if !ok {
		return nil, invalid("evaluated_at", "must be a parseable ISO 8601 instant; got %q", evaluatedAt)
	}
	e := newEvaluation(v, t)
	return e.warrantView(evaluatedAt), nil
}

// evaluation holds the records available at T and the facts derived from
// them, computed once and shared by the axes and the diagnostics.
type evaluation struct {
	v   *View
	t   Instant
	avA []*Assertion
	avS []*Evidence
	avO []*Evidence
	avC []availableCheck

	verification class
	freshest     int // index into avC of the newest class-conferring check, -1 if none
	stale        bool
}

// availableCheck is a check available at T with its class and instant.
type availableCheck struct {
	*Check
	class class
	at    Instant
}

func newEvaluation(v *View, t Instant) *evaluation {
	e := &evaluation{v: v, t: t, freshest: -1}
	// Sized for the common case where every record is available, so each
	// list is allocated once.
	e.avA = make([]*Assertion, 0, len(v.Assertions))
	e.avS = make([]*Evidence, 0, len(v.Evidence))
	e.avC = make([]availableCheck, 0, len(v.Checks))
	for i := range v.Assertions {
		if available(v.Assertions[i].AssertedAt, t) {
			e.avA = append(e.avA, &v.Assertions[i])
		}
	}
	for i := range v.Evidence {
		ev := &v.Evidence[i]
		if !available(ev.ObservedAt, t) {
			continue
		}
		if ev.Polarity == Supports {
			e.avS = append(e.avS, ev)
		} else {
			e.avO = append(e.avO, ev)
		}
	}
	for i := range v.Checks {
		c := &v.Checks[i]
		if ct, ok := ParseInstant(c.ObservedAt); ok && ct <= t {
			k := classify(c, v.Subjects)
			e.avC = append(e.avC, availableCheck{c, k, ct})
			e.verification = max(e.verification, k)
		}
	}
	e.findFreshest()
	return e
}

func available(ts string, t Instant) bool {
	at, ok := ParseInstant(ts)
	return ok && at <= t
}

// findFreshest picks the newest check conferring the view's class and
// decides staleness from its age.
func (e *evaluation) findFreshest() {
	if e.verification == classNone {
		return
	}
	for i, c := range e.avC {
		if c.class == e.verification && (e.freshest < 0 || c.at > e.avC[e.freshest].at) {
			e.freshest = i
		}
	}
	e.stale = olderThan(e.t-e.avC[e.freshest].at, e.v.Freshness)
}

// olderThan reports age > limit seconds, comparing as the reference does:
// the age as a correctly rounded float of seconds against the integer limit.
func olderThan(ageMicros Instant, limit int64) bool {
	var age float64
	if n := int64(ageMicros); n > -(1<<53) && n < 1<<53 {
		age = float64(n) / 1e6
	} else {
		age, _ = new(big.Rat).SetFrac64(n, 1e6).Float64()
	}
	return age > float64(limit) && !math.IsNaN(age)
}

func (e *evaluation) conflict() string {
	resolved := false
	for _, c := range e.v.Conflicts {
		if c.Status == StatusOpen {
			return ConflictOpen
		}
		resolved = true
	}
	pro, con := len(e.avS) > 0, len(e.avO) > 0
	for _, c := range e.avC {
		pro = pro || c.Result == Supports
		con = con || c.Result == Opposes
	}
	switch {
	case pro && con:
		return ConflictOpen
	case resolved:
		return ConflictResolved
	}
	return ConflictNone
}

func (e *evaluation) superseded() bool {
	d := decoder{prop: e.v.PropositionID}
	for _, l := range e.v.Lineage {
		if l.Kind == KindSupersededBy && d.bounded(l.FromID) {
			return true
		}
	}
	return false
}

func (e *evaluation) currency() string {
	switch {
	case e.superseded():
		return Superseded
	case e.stale:
		return Stale
	}
	return Current
}

func (e *evaluation) sufficiency() string {
	v := e.v
	switch {
	case v.Degraded || len(v.OmittedSources) > 0 || v.RetrievalScope != DefaultRetrievalScope:
		return Degraded
	case len(e.avA)+len(e.avS)+len(e.avO)+len(e.avC) == 0:
		return Insufficient
	}
	return Sufficient
}

func (e *evaluation) acceptance(conflict, currency, sufficiency string) string {
	if len(e.avA) == 0 && len(e.avS) == 0 {
		return Unaccepted
	}
	if e.verification < classExternal || conflict == ConflictOpen || currency == Superseded ||
		sufficiency != Sufficient || e.stale || e.trustedOpposition() {
		return Tentative
	}
	return Accepted
}

// trustedOpposition: a HUMAN or EXTERNAL check that opposes the claim.
func (e *evaluation) trustedOpposition() bool {
	for _, c := range e.avC {
		if c.class >= classExternal && c.Result == Opposes {
			return true
		}
	}
	return false
}

// lineageCount is the number of distinct source lineages over available
// assertions, evidence and checks.
func (e *evaluation) lineageCount() int {
	seen := make(map[string]struct{}, 8)
	for _, a := range e.avA {
		seen[a.Source.LineageID] = struct{}{}
	}
	for _, s := range e.avS {
		seen[s.Source.LineageID] = struct{}{}
	}
	for _, o := range e.avO {
		seen[o.Source.LineageID] = struct{}{}
	}
	for _, c := range e.avC {
		seen[c.Source.LineageID] = struct{}{}
	}
	return len(seen)
}
