package warrant

import "math"

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
	ax.RationaleCodes = rationale(ax)
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
		OmittedSources:          nonNil(v.OmittedSources),
		FalsificationConditions: []string{},
	}
	e.idLists(w)
	w.DerivedFrom, w.Supersedes, w.SupersededBy = lineageIDs(v)
	return w
}

// idLists fills the id arrays of w, all carved from one allocation.
func (e *evaluation) idLists(w *WarrantView) {
	v := e.v
	ids := make([]string, 0, len(e.avS)+len(e.avO)+len(v.Checks)+len(v.Conflicts)+1)
	take := func(from int) []string { return ids[from:len(ids):len(ids)] }
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

func lineageIDs(v *View) (derived, supersedes, supersededBy []string) {
	derived, supersedes, supersededBy = []string{}, []string{}, []string{}
	for _, l := range v.Lineage {
		switch l.Kind {
		case KindDerivedFrom:
			derived = append(derived, l.ToID)
		case KindSupersedes:
			supersedes = append(supersedes, l.ToID)
		case KindSupersededBy:
			supersededBy = append(supersededBy, l.ToID)
		}
	}
	return derived, supersedes, supersededBy
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// rationale lists one code per notable axis value, sorted, as the
// reference's goldens show. The axes' names sort acceptance, conflict,
// currency, sufficiency, verification, so appending in that order sorts.
func rationale(ax Axes) []string {
	codes := make([]string, 1, 5)
	switch ax.Acceptance {
	case Accepted:
		codes[0] = "acceptance.accepted"
	case Tentative:
		codes[0] = "acceptance.tentative"
	default:
		codes[0] = "acceptance.unaccepted"
	}
	switch ax.Conflict {
	case ConflictOpen:
		codes = append(codes, "conflict.open")
	case ConflictResolved:
		codes = append(codes, "conflict.resolved")
	}
	switch ax.Currency {
	case Superseded:
		codes = append(codes, "currency.superseded")
	case Stale:
		codes = append(codes, "currency.stale_check")
	}
	switch ax.Sufficiency {
	case Degraded:
		codes = append(codes, "sufficiency.degraded")
	case Insufficient:
		codes = append(codes, "sufficiency.insufficient")
	}
	switch ax.Verification {
	case VerHuman:
		return append(codes, "verification.human")
	case VerExternal:
		return append(codes, "verification.external")
	case VerIndirect:
		return append(codes, "verification.indirect")
	}
	return append(codes, "verification.none")
}

// strength is the reference's non-normative score; nothing branches on
// it. The reference does not publish the formula. The weights below fit
// every golden of its pack exactly; those marked "unobserved" never occur
// in a golden and are our own choice.
func (e *evaluation) strength(ax Axes) float64 {
	return hundredths(rawStrength(ax, e.lineages))
}

// rawStrength is the score before rounding.
func rawStrength(ax Axes, lineages int) float64 {
	// UNACCEPTED (weight 0), HUMAN and INDIRECT are unobserved in the goldens.
	s := weight(ax.Acceptance, w{Accepted, 0.65}, w{Tentative, 0.35})
	s += weight(ax.Verification, w{VerExternal, 0.2}, w{VerHuman, 0.25}, w{VerIndirect, 0.05})
	if lineages >= 2 {
		s += 0.05
	}
	s -= weight(ax.Conflict, w{ConflictOpen, 0.2})
	s -= weight(ax.Currency, w{Superseded, 0.35}, w{Stale, 0.15})
	s -= weight(ax.Sufficiency, w{Degraded, 0.15}, w{Insufficient, 0.15}) // INSUFFICIENT unobserved
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
