package warrant

import "strconv"

// StringField names where a string of a view stands. Its Path is built
// only when asked for: a walk over every string of a large load must not
// format a name per string.
type StringField struct {
	at   loc
	name string
	elem int // index into a list of strings, or -1
}

// Path is the field's JSON path, e.g. "checks[2].source.origin_type" or
// "subjects[7]".
func (f StringField) Path() string {
	p := f.at.field(f.name)
	if f.elem >= 0 {
		p += "[" + strconv.Itoa(f.elem) + "]"
	}
	return p
}

// FirstString calls bad on every string the view's text held, in the
// order the fields are decoded — ids, texts, times, list entries, source
// fields — and returns the field of the first one bad reports, if any.
// Left out are the enums, which decoding already held to their closed
// sets, a derived view_id and the default retrieval_scope, which were
// not in the text, and adapter_meta, which is kept as JSON text.
func (v *View) FirstString(bad func(string) bool) (StringField, bool) {
	w := stringWalk{bad: bad}
	w.one(loc{}, "proposition_id", v.PropositionID)
	if !v.ViewIDDerived {
		w.one(loc{}, "view_id", v.ViewID)
	}
	w.list(loc{}, "omitted_sources", v.OmittedSources)
	w.list(loc{}, "subjects", v.Subjects)
	if v.RetrievalScope != DefaultRetrievalScope {
		w.one(loc{}, "retrieval_scope", v.RetrievalScope)
	}
	for i := range v.Assertions {
		a, l := &v.Assertions[i], loc{list: "assertions", i: i}
		w.one(l, "assertion_id", a.AssertionID)
		w.one(l, "text", a.Text)
		w.one(l, "asserted_by", a.AssertedBy)
		w.source(l, &a.Source)
		w.one(l, "asserted_at", a.AssertedAt)
		w.one(l, "proposition_id", a.PropositionID)
	}
	for i := range v.Evidence {
		e, l := &v.Evidence[i], loc{list: "evidence", i: i}
		w.one(l, "evidence_id", e.EvidenceID)
		w.source(l, &e.Source)
		w.one(l, "content", e.Content)
		w.one(l, "observed_at", e.ObservedAt)
		w.one(l, "proposition_id", e.PropositionID)
	}
	for i := range v.Checks {
		k, l := &v.Checks[i], loc{list: "checks", i: i}
		w.one(l, "check_id", k.CheckID)
		w.one(l, "method", k.Method)
		w.one(l, "scope", k.Scope)
		w.source(l, &k.Source)
		w.one(l, "observed_at", k.ObservedAt)
		w.list(l, "subjects", k.Subjects)
	}
	for i := range v.Conflicts {
		k, l := &v.Conflicts[i], loc{list: "conflicts", i: i}
		w.one(l, "conflict_id", k.ConflictID)
		w.list(l, "proposition_ids", k.PropositionIDs)
		w.one(l, "note", k.Note)
	}
	for i := range v.Lineage {
		e, l := &v.Lineage[i], loc{list: "lineage", i: i}
		w.one(l, "from_id", e.FromID)
		w.one(l, "to_id", e.ToID)
	}
	return w.found, w.ok
}

// stringWalk remembers the first string bad reported.
type stringWalk struct {
	bad   func(string) bool
	found StringField
	ok    bool
}

func (w *stringWalk) one(l loc, name, s string) {
	if !w.ok && w.bad(s) {
		w.found, w.ok = StringField{at: l, name: name, elem: -1}, true
	}
}

func (w *stringWalk) list(l loc, name string, ss []string) {
	for i, s := range ss {
		if !w.ok && w.bad(s) {
			w.found, w.ok = StringField{at: l, name: name, elem: i}, true
		}
	}
}

func (w *stringWalk) source(l loc, s *SourceRef) {
	l.sub = "source"
	w.one(l, "source_id", s.SourceID)
	w.one(l, "lineage_id", s.LineageID)
	w.one(l, "origin_type", s.OriginType)
	w.one(l, "origin_locator", s.OriginLocator)
	w.one(l, "snapshot_id", s.SnapshotID)
	w.one(l, "content_hash", s.ContentHash)
	w.one(l, "observed_at", s.ObservedAt)
	if s.ExtractorID != nil {
		w.one(l, "extractor_id", *s.ExtractorID)
	}
	if s.ParentSourceID != nil {
		w.one(l, "parent_source_id", *s.ParentSourceID)
	}
}
