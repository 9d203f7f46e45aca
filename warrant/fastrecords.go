package warrant

import "github.com/ewp-go/ewp/warrant/internal/pyjson"

// Record decoding of the fast path. Each reader returns false to give up;
// the general path then decides.

func (f *fastDecoder) assertions(v *View) bool {
	var ok bool
	v.Assertions, ok = readList(f, &f.as, f.assertion)
	return ok && distinct(v.Assertions, func(r *Assertion) string { return r.AssertionID })
}

// readList reads a record list into scratch with one, and returns the
// records as a slice of their own. Null is an absent list (nil).
func readList[T any](f *fastDecoder, scratch *[]T, one func(*T) bool) ([]T, bool) {
	if f.sc.Null() {
		return nil, true
	}
	if !f.sc.Array() {
		return nil, false
	}
	list := (*scratch)[:0]
	for f.sc.Elem() {
		if f.records++; exceeds(f.records, f.lim.MaxRecords) {
			return nil, false
		}
		var rec T
		list = append(list, rec)
		if !one(&list[len(list)-1]) {
			return nil, false
		}
	}
	*scratch = list
	return exact(scratch, f.once), !f.sc.Failed()
}

func (f *fastDecoder) assertion(a *Assertion) bool {
	if !f.sc.Object() {
		return false
	}
	var seen uint64
	for i := range f.members(assertionOrder, &seen) {
		switch i {
		case fAssertionID:
			a.AssertionID = f.text()
		case fText:
			a.Text = f.text()
		case fAssertedBy:
			a.AssertedBy = f.text()
		case fConfidence:
			a.Confidence = f.confidence()
		case fSource:
			f.source(&a.Source)
		case fAssertedAt:
			a.AssertedAt = f.text()
		case fPropositionID:
			a.PropositionID = f.recordProp()
		default:
			f.sc.Skip()
		}
	}
	return !f.sc.Failed() && seen&needAssertion == needAssertion
}

// recordProp reads a record's proposition_id. It stays "" when null, to be
// filled in once the view's own is known; an explicit "" names no
// proposition of the view and gives up.
func (f *fastDecoder) recordProp() string {
	if f.sc.Null() {
		return ""
	}
	s := f.sc.Str()
	if s == "" {
		f.sc.Stop()
	}
	return s
}

func (f *fastDecoder) evidence(v *View) bool {
	var ok bool
	v.Evidence, ok = readList(f, &f.ev, f.evidenceItem)
	return ok && distinct(v.Evidence, func(r *Evidence) string { return r.EvidenceID })
}

func (f *fastDecoder) evidenceItem(e *Evidence) bool {
	if !f.sc.Object() {
		return false
	}
	var seen uint64
	for i := range f.members(evidenceOrder, &seen) {
		switch i {
		case fEvidenceID:
			e.EvidenceID = f.text()
		case fPolarity:
			e.Polarity = f.enum(Supports, Opposes)
		case fSource:
			f.source(&e.Source)
		case fContent:
			e.Content = f.text()
		case fObservedAt:
			e.ObservedAt = f.text()
		case fPropositionID:
			e.PropositionID = f.recordProp()
		default:
			f.sc.Skip()
		}
	}
	return !f.sc.Failed() && seen&needEvidence == needEvidence
}

func (f *fastDecoder) checks(v *View) bool {
	var ok bool
	v.Checks, ok = readList(f, &f.ch, f.check)
	return ok && distinct(v.Checks, func(r *Check) string { return r.CheckID })
}

func (f *fastDecoder) check(c *Check) bool {
	if !f.sc.Object() {
		return false
	}
	var seen uint64
	for i := range f.members(checkOrder, &seen) {
		switch i {
		case fCheckID:
			c.CheckID = f.text()
		case fMethod:
			c.Method = f.text()
		case fScope:
			c.Scope = f.text()
		case fSource:
			f.source(&c.Source)
		case fObservedAt:
			c.ObservedAt = f.text()
		case fResult:
			c.Result = f.enum(Supports, Opposes, Inconclusive)
		case fSubjects:
			c.Subjects = f.strings()
		default:
			f.sc.Skip()
		}
	}
	if c.Subjects == nil {
		c.Subjects = []string{}
	}
	return !f.sc.Failed() && seen&needCheck == needCheck
}

func (f *fastDecoder) conflicts(v *View) bool {
	var ok bool
	v.Conflicts, ok = readList(f, &f.co, f.conflict)
	return ok && distinct(v.Conflicts, func(r *Conflict) string { return r.ConflictID })
}

func (f *fastDecoder) conflict(c *Conflict) bool {
	if !f.sc.Object() {
		return false
	}
	var seen uint64
	for i := range f.members(conflictOrder, &seen) {
		switch i {
		case fConflictID:
			c.ConflictID = f.text()
		case fStatus:
			c.Status = f.enum(StatusOpen, StatusResolved)
		case fPropositionIDs:
			c.PropositionIDs = f.strings()
		case fNote:
			// Any falsy note reads "", but only null and strings are taken.
			c.Note = f.optStr()
		default:
			f.sc.Skip()
		}
	}
	return !f.sc.Failed() && seen&needConflict == needConflict && len(c.PropositionIDs) > 0
}

func (f *fastDecoder) lineage(v *View) bool {
	var ok bool
	v.Lineage, ok = readList(f, &f.li, f.edge)
	return ok
}

func (f *fastDecoder) edge(e *LineageEdge) bool {
	if !f.sc.Object() {
		return false
	}
	var seen uint64
	for i := range f.members(edgeOrder, &seen) {
		switch i {
		case fKind:
			e.Kind = f.enum(KindDerivedFrom, KindSupersedes, KindSupersededBy, KindParentSource)
		case fFromID:
			e.FromID = f.text()
		case fToID:
			e.ToID = f.text()
		default:
			f.sc.Skip()
		}
	}
	return !f.sc.Failed() && seen&needEdge == needEdge && e.FromID != "" && e.ToID != ""
}

// source reads a record's SourceRef and holds one source_id to one
// SourceRef across the view.
func (f *fastDecoder) source(s *SourceRef) {
	// Records usually repeat a few sources word for word: the same text is
	// the same SourceRef, already checked, with no need to decode it.
	if k, _ := f.sc.Peek(); k != pyjson.Object {
		f.sc.Stop()
		return
	}
	start := f.sc.Pos()
	for i := len(f.raw) - 1; i >= max(0, len(f.raw)-recentSources); i-- {
		if f.sc.Literal(f.raw[i].text) {
			*s = f.src.refs[f.raw[i].src]
			s.ExtractorID, s.ParentSourceID = f.copyPtr(s.ExtractorID), f.copyPtr(s.ParentSourceID)
			return
		}
	}
	f.sc.Object()
	var seen uint64
	for i := range f.members(sourceOrder, &seen) {
		switch i {
		case fSourceID:
			s.SourceID = f.text()
		case fLineageID:
			s.LineageID = f.text()
		case fOriginType:
			s.OriginType = f.text()
		case fOriginLocator:
			s.OriginLocator = f.text()
		case fSnapshotID:
			s.SnapshotID = f.text()
		case fContentHash:
			s.ContentHash = f.text()
		case fObservedAt:
			s.ObservedAt = f.text()
		case fExtractorID:
			s.ExtractorID = f.optPtr()
		case fParentSourceID:
			s.ParentSourceID = f.optPtr()
		default:
			f.sc.Skip()
		}
	}
	if f.sc.Failed() || seen&needSource != needSource || !f.oneSource(s) {
		f.sc.Stop()
		return
	}
	f.raw = append(f.raw, rawSource{f.sc.Text(start, f.sc.Pos()), f.src.find(s.SourceID)})
}

// recentSources is how many source texts a record's source is compared
// with before it is decoded.
const recentSources = 4

// rawSource is the text of a source object met in the view, and the index
// in f.src of the SourceRef it reads as.
type rawSource struct {
	text string
	src  int
}

// oneSource reports whether s agrees with any SourceRef met before under
// its source_id, and remembers it.
func (f *fastDecoder) oneSource(s *SourceRef) bool {
	if i := f.src.find(s.SourceID); i >= 0 {
		return sameSource(f.src.refs[i], *s)
	}
	f.src.add(*s)
	return true
}

// finish applies what needs the whole view: record propositions bound to
// the view's, conflicts naming it, the derived view id.
func (f *fastDecoder) finish(v *View) bool {
	d := decoder{prop: v.PropositionID}
	for i := range v.Assertions {
		if !d.ownProp(&v.Assertions[i].PropositionID) {
			return false
		}
	}
	for i := range v.Evidence {
		if !d.ownProp(&v.Evidence[i].PropositionID) {
			return false
		}
	}
	for i := range v.Conflicts {
		if !d.namesView(v.Conflicts[i].PropositionIDs) {
			return false
		}
	}
	fill(&v.Assertions)
	fill(&v.Evidence)
	fill(&v.Checks)
	fill(&v.Conflicts)
	fill(&v.Lineage)
	fill(&v.OmittedSources)
	fill(&v.Subjects)
	if v.ViewID == "" {
		v.ViewID = DerivedViewID(v)
		v.ViewIDDerived = true
	}
	return true
}

// ownProp fills in a record's absent proposition_id and checks a given one.
func (d *decoder) ownProp(p *string) bool {
	if *p == "" {
		*p = d.prop
		return true
	}
	return d.bounded(*p)
}

// fill makes an absent list empty, as the general path does.
func fill[T any](list *[]T) {
	if *list == nil {
		*list = []T{}
	}
}

// exact gives the records in *scratch a slice of their own, of exactly
// their length: a copy, or, for a decoder used once, the scratch itself.
func exact[T any](scratch *[]T, once bool) []T {
	s := *scratch
	switch {
	case len(s) == 0:
		return []T{}
	case once:
		*scratch = nil
		return s[:len(s):len(s)]
	}
	out := make([]T, len(s))
	copy(out, s)
	return out
}

// distinct reports whether every record has its own id, by the general
// decoder's check.
func distinct[T any](recs []T, id func(*T) string) bool {
	var seen map[string]struct{}
	for i := range recs {
		var err error
		if seen, err = checkUnique(recs[:i+1], seen, id, loc{}, "", ""); err != nil {
			return false
		}
	}
	return true
}
