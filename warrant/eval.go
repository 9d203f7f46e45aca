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
	var e evaluation
	e.init(v, t)
	return e.warrantView(evaluatedAt), nil
}

// evaluation holds the records available at T and the facts derived from
// them, computed once and shared by the axes and the diagnostics. It lives
// on the caller's stack; so do its lists while a view is small.
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
	lineages     int
	notes        notes      // what the rationale codes report beyond the axes
	subjects     subjectSet // the view's subjects, for subject binding

	bufA [smallView]*Assertion
	bufS [smallView]*Evidence
	bufO [smallView]*Evidence
	bufC [smallView]availableCheck
}

// smallView is how many records of each kind an evaluation holds without
// allocating.
const smallView = 8

// availableCheck is a check available at T with its class and instant.
type availableCheck struct {
	*Check
	class class
	at    Instant
}

func (e *evaluation) init(v *View, t Instant) {
	e.v, e.t, e.freshest = v, t, -1
	e.avA, e.avS, e.avO, e.avC = e.bufA[:0], e.bufS[:0], e.bufO[:0], e.bufC[:0]
	e.subjects.reset(v.Subjects)
	for i := range v.Assertions {
		if available(v.Assertions[i].AssertedAt, t) {
			e.avA = append(e.avA, &v.Assertions[i])
		} else {
			e.notes |= futureAssertion
		}
	}
	for i := range v.Evidence {
		ev := &v.Evidence[i]
		if !available(ev.ObservedAt, t) {
			e.notes |= futureEvidence
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
		e.notes |= checkNotes(c)
		if ct, ok := ParseInstant(c.ObservedAt); ok && ct <= t {
			k := classify(c, &e.subjects)
			e.avC = append(e.avC, availableCheck{c, k, ct})
			e.verification = max(e.verification, k)
		} else {
			e.notes |= futureCheck
		}
	}
	e.findFreshest()
	e.lineages = e.lineageCount()
}

func available(ts string, t Instant) bool {
	at, ok := ParseInstant(ts)
	return ok && at <= t
}

// findFreshest picks the newest available check conferring the view's
// class (the first of equals) and decides staleness from its age. With
// verification NONE every available check confers NONE, so the reference
// still names the newest one, but nothing is stale (§5 currency).
func (e *evaluation) findFreshest() {
	for i, c := range e.avC {
		if c.class == e.verification && (e.freshest < 0 || c.at > e.avC[e.freshest].at) {
			e.freshest = i
		}
	}
	if e.verification != classNone {
		e.stale = olderThan(e.t-e.avC[e.freshest].at, e.v.Freshness)
	}
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

// conflict is the conflict axis. An OPEN conflict that no open row
// declares, implied by opposite polarities alone, is noted for the
// rationale codes.
func (e *evaluation) conflict() string {
	resolved := false
	for _, c := range e.v.Conflicts {
		if c.Status == StatusOpen {
			e.notes |= openRow
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
		e.notes |= impliedConflict
		return ConflictOpen
	case resolved:
		return ConflictResolved
	}
	return ConflictNone
}

func (e *evaluation) superseded() bool {
	for _, l := range e.v.Lineage {
		if e.supersedesP(l) {
			return true
		}
	}
	return false
}

// supersedesP: a superseded_by edge from P or a variant P:<suffix>, the
// only edges that make the proposition SUPERSEDED.
func (e *evaluation) supersedesP(l LineageEdge) bool {
	d := decoder{prop: e.v.PropositionID}
	return l.Kind == KindSupersededBy && d.bounded(l.FromID)
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
	var l lineageSet
	for _, a := range e.avA {
		l.add(a.Source.LineageID)
	}
	for _, s := range e.avS {
		l.add(s.Source.LineageID)
	}
	for _, o := range e.avO {
		l.add(o.Source.LineageID)
	}
	for _, c := range e.avC {
		l.add(c.Source.LineageID)
	}
	return l.n
}

// lineageSet counts distinct ids: a scan while there are few, a map after.
type lineageSet struct {
	few  [smallSet]string
	n    int
	many map[string]struct{}
}

func (l *lineageSet) add(id string) {
	if l.many != nil {
		l.many[id] = struct{}{}
		l.n = len(l.many)
		return
	}
	for _, s := range l.few[:l.n] {
		if s == id {
			return
		}
	}
	if l.n < smallSet {
		l.few[l.n] = id
		l.n++
		return
	}
	l.many = make(map[string]struct{}, 4*smallSet)
	for _, s := range l.few {
		l.many[s] = struct{}{}
	}
	l.many[id] = struct{}{}
	l.n = len(l.many)
}
