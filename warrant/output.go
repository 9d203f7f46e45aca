package warrant

import (
	"slices"
	"strconv"
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
	ax.RationaleCodes = rationale(ax)
	w := &WarrantView{
		ProtocolVersion:         ProtocolVersion,
		PropositionID:           v.PropositionID,
		ViewID:                  v.ViewID,
		PolicyID:                PolicyID,
		PolicyVersion:           PolicyVersion,
		EvaluatedAt:             evaluatedAt,
		Warrant:                 ax,
		SupportingEvidenceIDs:   evidenceIDs(e.avS),
		OpposingEvidenceIDs:     evidenceIDs(e.avO),
		IndependentLineageCount: e.lineageCount(),
		Checks:                  checkIDs(v.Checks),
		Stale:                   e.stale,
		OmittedSources:          nonNil(v.OmittedSources),
		FalsificationConditions: []string{},
	}
	if e.freshest >= 0 {
		id := e.avC[e.freshest].CheckID
		w.FreshestCheck = &id
	}
	w.OpenConflicts, w.ResolvedConflicts = conflictIDs(v.Conflicts)
	w.DerivedFrom, w.Supersedes, w.SupersededBy = lineageIDs(v)
	return w
}

func evidenceIDs(list []*Evidence) []string {
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.EvidenceID
	}
	return out
}

func checkIDs(list []Check) []string {
	out := make([]string, len(list))
	for i := range list {
		out[i] = list[i].CheckID
	}
	return out
}

func conflictIDs(list []Conflict) (open, resolved []string) {
	open, resolved = []string{}, []string{}
	for _, c := range list {
		if c.Status == StatusOpen {
			open = append(open, c.ConflictID)
		} else {
			resolved = append(resolved, c.ConflictID)
		}
	}
	return open, resolved
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
// reference's goldens show.
func rationale(ax Axes) []string {
	codes := []string{"acceptance." + lower(ax.Acceptance), "verification." + lower(ax.Verification)}
	if ax.Conflict != ConflictNone {
		codes = append(codes, "conflict."+lower(ax.Conflict))
	}
	switch ax.Currency {
	case Superseded:
		codes = append(codes, "currency.superseded")
	case Stale:
		codes = append(codes, "currency.stale_check")
	}
	if ax.Sufficiency != Sufficient {
		codes = append(codes, "sufficiency."+lower(ax.Sufficiency))
	}
	slices.Sort(codes)
	return codes
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// strength is the reference's non-normative score; nothing branches on
// it. The reference does not publish the formula. The weights below fit
// every golden of its pack exactly; those marked "unobserved" never occur
// in a golden and are our own choice.
func (e *evaluation) strength(ax Axes) float64 {
	// UNACCEPTED (weight 0), HUMAN and INDIRECT are unobserved in the goldens.
	s := weight(ax.Acceptance, w{Accepted, 0.65}, w{Tentative, 0.35})
	s += weight(ax.Verification, w{VerExternal, 0.2}, w{VerHuman, 0.25}, w{VerIndirect, 0.05})
	if e.lineageCount() >= 2 {
		s += 0.05
	}
	s -= weight(ax.Conflict, w{ConflictOpen, 0.2})
	s -= weight(ax.Currency, w{Superseded, 0.35}, w{Stale, 0.15})
	s -= weight(ax.Sufficiency, w{Degraded, 0.15}, w{Insufficient, 0.15}) // INSUFFICIENT unobserved
	s = min(1, max(0, s))
	// Round to two places on the exact binary value, as Python's round().
	r, _ := strconv.ParseFloat(strconv.FormatFloat(s, 'f', 2, 64), 64)
	return r
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
