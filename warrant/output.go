package warrant

import (
	"math"
	"slices"
)

func (e *evaluation) warrantView(evaluatedAt string) *WarrantView {
	v := e.v
	conflict, currency, sufficiency := e.conflict(), e.currency(), e.sufficiency()
	ax := Axes{
		Acceptance:   e.acceptance(conflict, currency, sufficiency),
		Conflict:     conflict,
		Verification: e.verification.String(),
		Currency:     currency,
		Sufficiency:  sufficiency,
	}
	ax.Strength = e.strength(ax)
	n := e.notes
	if e.stale {
		n |= staleCheck
	}
	ax.RationaleCodes = rationale(ax, n)
	w := &WarrantView{
		ProtocolVersion:         ProtocolVersion,
		PropositionID:           v.PropositionID,
		ViewID:                  v.ViewID,
		PolicyID:                PolicyID,
		PolicyVersion:           PolicyVersion,
		EvaluatedAt:             evaluatedAt,
		Warrant:                 ax,
		IndependentLineageCount: e.lineages,
		Stale:                   e.stale,
		OmittedSources:          sortedCopy(v.OmittedSources),
		FalsificationConditions: []string{},
	}
	e.idLists(w)
	w.DerivedFrom, w.Supersedes, w.SupersededBy = e.lineageIDs()
	return w
}

// idLists fills the id arrays of w, all carved from one allocation. The
// reference lists every one in sorted order (code point order, which is
// byte order of UTF-8 and of the WTF-8 the kernel keeps lone surrogates in).
func (e *evaluation) idLists(w *WarrantView) {
	v := e.v
	ids := make([]string, 0, len(e.avS)+len(e.avO)+len(v.Checks)+len(v.Conflicts)+1)
	take := func(from int) []string {
		s := ids[from:len(ids):len(ids)]
		slices.Sort(s)
		return s
	}
	for _, ev := range e.avS {
		ids = append(ids, ev.EvidenceID)
	}
	w.SupportingEvidenceIDs = take(0)
	n := len(ids)
	for _, ev := range e.avO {
		ids = append(ids, ev.EvidenceID)
	}
	w.OpposingEvidenceIDs = take(n)
	n = len(ids)
	for i := range v.Checks {
		ids = append(ids, v.Checks[i].CheckID)
	}
	w.Checks = take(n)
	n = len(ids)
	for _, c := range v.Conflicts {
		if c.Status == StatusOpen {
			ids = append(ids, c.ConflictID)
		}
	}
	w.OpenConflicts = take(n)
	n = len(ids)
	for _, c := range v.Conflicts {
		if c.Status != StatusOpen {
			ids = append(ids, c.ConflictID)
		}
	}
	w.ResolvedConflicts = take(n)
	if e.freshest >= 0 {
		ids = append(ids, e.avC[e.freshest].CheckID)
		w.FreshestCheck = &ids[len(ids)-1]
	}
}

// lineageIDs lists the targets of the lineage edges, sorted, duplicates
// kept: derived_from and supersedes over every edge of their kind, and
// superseded_by only over the edges that supersede P itself (from P or a
// variant), the same edges that make currency SUPERSEDED. An edge between
// two other propositions says nothing about what replaced this one.
func (e *evaluation) lineageIDs() (derived, supersedes, supersededBy []string) {
	derived, supersedes, supersededBy = []string{}, []string{}, []string{}
	for _, l := range e.v.Lineage {
		switch {
		case l.Kind == KindDerivedFrom:
			derived = append(derived, l.ToID)
		case l.Kind == KindSupersedes:
			supersedes = append(supersedes, l.ToID)
		case e.supersedesP(l):
			supersededBy = append(supersededBy, l.ToID)
		}
	}
	slices.Sort(derived)
	slices.Sort(supersedes)
	slices.Sort(supersededBy)
	return derived, supersedes, supersededBy
}

// sortedCopy returns s sorted, never nil, copying only when s is out of
// order so that the view's own list is never reordered.
func sortedCopy(s []string) []string {
	if s == nil {
		return []string{}
	}
	if slices.IsSorted(s) {
		return s
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// notes are the facts of a view that the rationale codes report beyond
// the five axes, gathered while the records are first walked.
type notes uint16

const (
	futureAssertion   notes = 1 << iota // an assertion not available at T
	futureEvidence                      // an evidence item not available at T
	futureCheck                         // a check not available at T
	inconclusiveCheck                   // a check (available or not) with result inconclusive
	opposingCheck                       // a check (available or not) with result opposes
	launderedCheck                      // an external method over an endogenous origin
	openRow                             // a conflict row with status open
	impliedConflict                     // OPEN from opposite polarities, no open row
	staleCheck                          // the class-conferring check is stale, even when SUPERSEDED outranks STALE
)

// checkNotes are the notes one check raises whatever its time: the
// reference reports an opposing or inconclusive result, and an external
// method whose source is the agent's own output (endogenous), even for a
// check not yet available at T.
func checkNotes(c *Check) notes {
	var n notes
	switch c.Result {
	case Inconclusive:
		n |= inconclusiveCheck
	case Opposes:
		n |= opposingCheck
	}
	if externalMethods[c.Method] && endogenousOrigins[c.Source.OriginType] {
		n |= launderedCheck
	}
	return n
}

// noteCodes maps each note to its rationale code.
var noteCodes = [...]struct {
	note notes
	code string
}{
	{futureAssertion, "availability.future_assertion"},
	{futureEvidence, "availability.future_evidence"},
	{impliedConflict, "conflict.implied_polarity"},
	{openRow, "conflict.open"},
	{inconclusiveCheck, "verification.inconclusive_present"},
	{launderedCheck, "verification.laundered_endogenous"},
	{futureCheck, "verification.not_available_at_t"},
	{opposingCheck, "verification.opposing_check"},
}

// rationale lists the reference's codes, sorted: one per axis value worth
// naming (acceptance and verification always; a RESOLVED conflict, a
// SUPERSEDED currency, a degraded or insufficient view), plus one per
// note. A stale class-conferring check is named even when SUPERSEDED
// outranks STALE on the currency axis. An OPEN conflict is named by its cause: conflict.open for an open
// row, conflict.implied_polarity for opposite polarities alone.
func rationale(ax Axes, n notes) []string {
	codes := make([]string, 0, 12)
	switch ax.Acceptance {
	case Accepted:
		codes = append(codes, "acceptance.accepted")
	case Tentative:
		codes = append(codes, "acceptance.tentative")
	default:
		codes = append(codes, "acceptance.none")
	}
	if ax.Conflict == ConflictResolved {
		codes = append(codes, "conflict.resolved")
	}
	if ax.Currency == Superseded {
		codes = append(codes, "currency.superseded")
	}
	if n&staleCheck != 0 {
		codes = append(codes, "currency.stale_check")
	}
	switch ax.Sufficiency {
	case Degraded:
		codes = append(codes, "sufficiency.degraded")
	case Insufficient:
		codes = append(codes, "sufficiency.none")
	}
	codes = append(codes, verificationCode(ax.Verification))
	for _, c := range noteCodes {
		if n&c.note != 0 {
			codes = append(codes, c.code)
		}
	}
	slices.Sort(codes)
	return codes
}

func verificationCode(v string) string {
	switch v {
	case VerHuman:
		return "verification.human"
	case VerExternal:
		return "verification.external"
	case VerIndirect:
		return "verification.indirect"
	}
	return "verification.none"
}

// strength is the reference's non-normative score; nothing branches on
// it. The reference does not publish the formula; this one was fitted to
// the reference's whole WarrantViews (its 26 goldens and the 3,924
// evaluated cases of the public differential corpus, where it reproduces
// every strength). The score is a function of the five axes and the
// independent lineage count alone.
func (e *evaluation) strength(ax Axes) float64 {
	return hundredths(rawStrength(ax, e.lineages))
}

// rawStrength is the score before rounding: a base per acceptance, a bonus
// per verification class, a step for lineage (none, one, two or more),
// penalties for an open conflict, a stale or superseded currency and a
// degraded or insufficient view, clamped to [0, 1].
func rawStrength(ax Axes, lineages int) float64 {
	s := weight(ax.Acceptance, w{Accepted, 0.65}, w{Tentative, 0.35}, w{Unaccepted, 0.2})
	s += weight(ax.Verification, w{VerHuman, 0.25}, w{VerExternal, 0.2}, w{VerIndirect, 0.05})
	switch {
	case lineages == 0:
		s -= 0.05
	case lineages >= 2:
		s += 0.05
	}
	s -= weight(ax.Conflict, w{ConflictOpen, 0.2})
	s -= weight(ax.Currency, w{Superseded, 0.35}, w{Stale, 0.15})
	s -= weight(ax.Sufficiency, w{Degraded, 0.15}, w{Insufficient, 0.05})
	return min(1, max(0, s))
}

// hundredths rounds s to two places as Python's round(s, 2) does. Every
// weight is a multiple of 0.05, so s is within float error of a multiple
// of 0.01, never near a tie, and the nearest float to that hundredth is
// what round() returns (TestStrengthRounding checks every combination).
func hundredths(s float64) float64 {
	return math.Round(s*100) / 100
}

// w is one axis value and its weight in the strength score.
type w struct {
	value  string
	weight float64
}

// weight returns the weight of value in table, 0 if it is not listed.
func weight(value string, table ...w) float64 {
	for _, t := range table {
		if t.value == value {
			return t.weight
		}
	}
	return 0
}
