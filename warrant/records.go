package warrant

import (
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/warrant/internal/pyjson"
)

func (d *decoder) records(obj *fields, v *View) error {
	if err := d.lim.checkRecords(countRecords(obj)); err != nil {
		return err
	}
	steps := []func(*fields, *View) error{
		d.assertions, d.evidence, d.checks, d.conflicts, d.lineage,
	}
	for _, step := range steps {
		if err := step(obj, v); err != nil {
			return err
		}
	}
	return nil
}

// countRecords counts the elements of the view's record lists, before
// any is decoded; a member that is not a list counts nothing (it is
// refused when read).
func countRecords(obj *fields) int {
	n := 0
	for _, key := range [...]string{"assertions", "evidence", "checks", "conflicts", "lineage"} {
		if x, ok := obj.Get(key); ok && x.Kind() == pyjson.Array {
			n += x.Len()
		}
	}
	return n
}

// loc names a record or field for refusal messages. The path text is built
// only when a refusal needs it, keeping the accepting path allocation-free.
type loc struct {
	list string // record array, or "" at the view's top level
	i    int
	sub  string // nested object inside the record ("source")
}

func (l loc) field(name string) string {
	p := l.list
	if p != "" {
		p += "[" + strconv.Itoa(l.i) + "]"
	}
	for _, part := range []string{l.sub, name} {
		if part != "" && p != "" {
			p += "." + part
		} else if part != "" {
			p = part
		}
	}
	return p
}

// bounded reports whether id is the view's proposition or a variant P:<suffix>.
func (d *decoder) bounded(id string) bool {
	return id == d.prop || (len(id) > len(d.prop) && id[len(d.prop)] == ':' && strings.HasPrefix(id, d.prop))
}

func (d *decoder) recordProposition(obj *fields, l loc) (string, error) {
	p, ok := optText(obj, "proposition_id")
	if !ok {
		return d.prop, nil
	}
	if !d.bounded(p) {
		return "", invalid(l.field("proposition_id"),
			"names proposition %s; a view holds only %s or its variants %s:<suffix>", pyjson.StrRepr(p), pyjson.StrRepr(d.prop), d.prop)
	}
	return p, nil
}

// smallSet is the size up to which a linear scan beats building a map.
const smallSet = 16

// decodeRecords decodes one record array: every element an object,
// decoded by one, with ids unique within the view.
func decodeRecords[T any](obj *fields, key, idKey, kind string,
	one func(*fields, loc) (T, error), id func(*T) string) ([]T, error) {
	x, err := recordArray(obj, key)
	if err != nil || x.Len() == 0 {
		return make([]T, 0), err
	}
	out := make([]T, 0, x.Len())
	var seen map[string]struct{} // only for long lists; short ones scan out
	// One scratch for the whole list: passed through a function value it
	// escapes, so a per-record variable would cost an allocation each.
	f := new(fields)
	items := x.Items()
	for i := 0; ; i++ {
		el, ok := items.Next()
		if !ok {
			return out, nil
		}
		l := loc{list: key, i: i}
		if el.Kind() != pyjson.Object {
			return nil, invalid(l.field(""), "must be an object, not %s", typeName(el))
		}
		*f = fields{}
		f.scan(el)
		rec, err := one(f, l)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
		if seen, err = checkUnique(out, seen, id, l, idKey, kind); err != nil {
			return nil, err
		}
	}
}

// checkUnique refuses the last record of recs when an earlier one has its
// id. Views are usually small, so it scans the earlier records and builds
// a set only once the list is long.
func checkUnique[T any](recs []T, seen map[string]struct{}, id func(*T) string,
	l loc, idKey, kind string) (map[string]struct{}, error) {
	last := len(recs) - 1
	rid := id(&recs[last])
	dup := false
	switch {
	case seen != nil:
		_, dup = seen[rid]
	case last < smallSet:
		for i := 0; i < last && !dup; i++ {
			dup = id(&recs[i]) == rid
		}
	default:
		seen = make(map[string]struct{}, 2*len(recs))
		for i := 0; i < last; i++ {
			seen[id(&recs[i])] = struct{}{}
		}
		_, dup = seen[rid]
	}
	if dup {
		return seen, invalid(l.field(idKey), "duplicate %s id %s (ids are unique within a view)", kind, pyjson.StrRepr(rid))
	}
	if seen != nil {
		seen[rid] = struct{}{}
	}
	return seen, nil
}

func (d *decoder) assertions(obj *fields, v *View) (err error) {
	v.Assertions, err = decodeRecords(obj, "assertions", "assertion_id", "assertion", d.assertion, func(r *Assertion) string { return r.AssertionID })
	return err
}

func (d *decoder) assertion(obj *fields, l loc) (a Assertion, err error) {
	if a.AssertionID, err = reqText(obj, "assertion_id", l); err != nil {
		return
	}
	if a.Text, err = reqText(obj, "text", l); err != nil {
		return
	}
	if a.AssertedBy, err = reqText(obj, "asserted_by", l); err != nil {
		return
	}
	if a.Confidence, err = confidence(obj, l); err != nil {
		return
	}
	if a.Source, err = d.source(obj, l); err != nil {
		return
	}
	if a.AssertedAt, err = reqText(obj, "asserted_at", l); err != nil {
		return
	}
	a.PropositionID, err = d.recordProposition(obj, l)
	return
}

func confidence(obj *fields, l loc) (float64, error) {
	x, ok := obj.Get("assertion_confidence")
	if !ok || x.IsNull() {
		return 0, invalid(l.field("assertion_confidence"), "is required (present and not null)")
	}
	n, ok := finiteNumber(x)
	if !ok {
		return 0, invalid(l.field("assertion_confidence"), "must be a finite number, not %s", describe(x))
	}
	return n, nil
}

func describe(x pyjson.Value) string {
	if x.Kind() == pyjson.Int || x.Kind() == pyjson.Float {
		return "out-of-range number " + x.Str()
	}
	return typeName(x)
}

func (d *decoder) evidence(obj *fields, v *View) (err error) {
	v.Evidence, err = decodeRecords(obj, "evidence", "evidence_id", "evidence", d.evidenceItem, func(r *Evidence) string { return r.EvidenceID })
	return err
}

func (d *decoder) evidenceItem(obj *fields, l loc) (e Evidence, err error) {
	if e.EvidenceID, err = reqText(obj, "evidence_id", l); err != nil {
		return
	}
	if e.Polarity, err = enumField(obj, "polarity", l, Supports, Opposes); err != nil {
		return
	}
	if e.Source, err = d.source(obj, l); err != nil {
		return
	}
	if e.Content, err = reqText(obj, "content", l); err != nil {
		return
	}
	if e.ObservedAt, err = reqText(obj, "observed_at", l); err != nil {
		return
	}
	e.PropositionID, err = d.recordProposition(obj, l)
	return
}

func (d *decoder) checks(obj *fields, v *View) (err error) {
	v.Checks, err = decodeRecords(obj, "checks", "check_id", "check", d.check, func(r *Check) string { return r.CheckID })
	return err
}

func (d *decoder) check(obj *fields, l loc) (c Check, err error) {
	if c.CheckID, err = reqText(obj, "check_id", l); err != nil {
		return
	}
	if c.Method, err = reqText(obj, "method", l); err != nil {
		return
	}
	if c.Scope, err = reqText(obj, "scope", l); err != nil {
		return
	}
	if c.Source, err = d.source(obj, l); err != nil {
		return
	}
	if c.ObservedAt, err = reqText(obj, "observed_at", l); err != nil {
		return
	}
	if c.Result, err = enumField(obj, "result", l, Supports, Opposes, Inconclusive); err != nil {
		return
	}
	c.Subjects, err = d.stringList(obj, "subjects", l)
	return
}

func (d *decoder) conflicts(obj *fields, v *View) (err error) {
	v.Conflicts, err = decodeRecords(obj, "conflicts", "conflict_id", "conflict", d.conflict, func(r *Conflict) string { return r.ConflictID })
	return err
}

func (d *decoder) conflict(obj *fields, l loc) (c Conflict, err error) {
	if c.ConflictID, err = reqText(obj, "conflict_id", l); err != nil {
		return
	}
	if c.Status, err = enumField(obj, "status", l, StatusOpen, StatusResolved); err != nil {
		return
	}
	if c.PropositionIDs, err = d.stringList(obj, "proposition_ids", l); err != nil {
		return
	}
	if len(c.PropositionIDs) == 0 {
		err = invalid(l.field("proposition_ids"), "must name at least one proposition")
		return
	}
	if !d.namesView(c.PropositionIDs) {
		err = invalid(l.field("proposition_ids"), "must name %s or a variant %s:<suffix>", pyjson.StrRepr(d.prop), d.prop)
		return
	}
	c.Note = note(obj)
	return
}

func (d *decoder) namesView(ids []string) bool {
	for _, id := range ids {
		if d.bounded(id) {
			return true
		}
	}
	return false
}

// note reads a conflict note; a falsy value (Python truthiness) reads "".
func note(obj *fields) string {
	x, ok := obj.Get("note")
	if !ok || falsy(x) {
		return ""
	}
	return pyjson.Str(x)
}

func falsy(x pyjson.Value) bool {
	switch x.Kind() {
	case pyjson.Null:
		return true
	case pyjson.Bool:
		return !x.Bool()
	case pyjson.Int, pyjson.Float:
		return x.Float() == 0
	case pyjson.String:
		return x.Str() == ""
	}
	return x.Len() == 0
}

func (d *decoder) lineage(obj *fields, v *View) error {
	x, err := recordArray(obj, "lineage")
	if err != nil {
		return err
	}
	v.Lineage = make([]LineageEdge, x.Len())
	x.Elems(func(i int, el pyjson.Value) bool {
		l := loc{list: "lineage", i: i}
		if el.Kind() != pyjson.Object {
			err = invalid(l.field(""), "must be an object, not %s", typeName(el))
			return false
		}
		v.Lineage[i], err = lineageEdge(el, l)
		return err == nil
	})
	return err
}

func lineageEdge(el pyjson.Value, l loc) (e LineageEdge, err error) {
	var f fields
	f.scan(el)
	if e.Kind, err = enumField(&f, "kind", l, KindDerivedFrom, KindSupersedes, KindSupersededBy, KindParentSource); err != nil {
		return
	}
	if e.FromID, err = endpoint(&f, "from_id", l); err != nil {
		return
	}
	e.ToID, err = endpoint(&f, "to_id", l)
	return
}

func endpoint(obj *fields, key string, l loc) (string, error) {
	x, ok := obj.Get(key)
	if !ok || x.Kind() != pyjson.String || x.Str() == "" {
		return "", invalid(l.field(key), "must be a non-empty string, not %s", typeNameOrMissing(x, ok))
	}
	return x.Str(), nil
}

func typeNameOrMissing(x pyjson.Value, ok bool) string {
	if !ok {
		return "missing"
	}
	return typeName(x)
}

// source decodes a record's SourceRef and enforces that one source_id
// names one SourceRef across the whole view.
func (d *decoder) source(rec *fields, l loc) (SourceRef, error) {
	x, ok := rec.Get("source")
	l.sub = "source"
	if !ok || x.IsNull() {
		return SourceRef{}, invalid(l.field(""), "is required (present and not null)")
	}
	if x.Kind() != pyjson.Object {
		return SourceRef{}, invalid(l.field(""), "must be an object, not %s", typeName(x))
	}
	var f fields
	f.scan(x)
	s, err := sourceRef(&f, l)
	if err != nil {
		return s, err
	}
	if i := d.sources.find(s.SourceID); i >= 0 {
		if !sameSource(d.sources.refs[i], s) {
			return s, invalid(l.field(""), "source_id %s already names a different SourceRef at %s (one source_id, one SourceRef)",
				pyjson.StrRepr(s.SourceID), d.sourceAt[i].field(""))
		}
		return s, nil
	}
	d.sources.add(s)
	d.sourceAt = append(d.sourceAt, l)
	return s, nil
}

// sourceRef reads a SourceRef. Written out field by field: a table of
// pointers into s would move every SourceRef to the heap.
func sourceRef(x *fields, l loc) (s SourceRef, err error) {
	if s.SourceID, err = reqText(x, "source_id", l); err != nil {
		return
	}
	if s.LineageID, err = reqText(x, "lineage_id", l); err != nil {
		return
	}
	if s.OriginType, err = reqText(x, "origin_type", l); err != nil {
		return
	}
	if s.OriginLocator, err = reqText(x, "origin_locator", l); err != nil {
		return
	}
	if s.SnapshotID, err = reqText(x, "snapshot_id", l); err != nil {
		return
	}
	if s.ContentHash, err = reqText(x, "content_hash", l); err != nil {
		return
	}
	if s.ObservedAt, err = reqText(x, "observed_at", l); err != nil {
		return
	}
	s.ExtractorID = optPtr(x, "extractor_id")
	s.ParentSourceID = optPtr(x, "parent_source_id")
	return
}

func optPtr(x *fields, key string) *string {
	if s, ok := optText(x, key); ok {
		return &s
	}
	return nil
}

func sameSource(a, b SourceRef) bool {
	return a.SourceID == b.SourceID && a.LineageID == b.LineageID && a.OriginType == b.OriginType &&
		a.OriginLocator == b.OriginLocator && a.SnapshotID == b.SnapshotID &&
		a.ContentHash == b.ContentHash && a.ObservedAt == b.ObservedAt &&
		samePtr(a.ExtractorID, b.ExtractorID) && samePtr(a.ParentSourceID, b.ParentSourceID)
}

func samePtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// sourceSet holds the SourceRefs met in a view, found by source_id: a
// scan while there are few, an index once there are many.
type sourceSet struct {
	refs  []SourceRef
	index map[string]int // built past smallSet sources
}

// reset empties the set for the next view. The index goes: it is built
// again when a view needs it, so one huge view is not kept.
func (s *sourceSet) reset() {
	s.refs, s.index = s.refs[:0], nil
}

// find returns the index of the SourceRef under id, or -1.
func (s *sourceSet) find(id string) int {
	if len(s.refs) > smallSet {
		if i, ok := s.index[id]; ok {
			return i
		}
		return -1
	}
	for i := range s.refs {
		if s.refs[i].SourceID == id {
			return i
		}
	}
	return -1
}

// add remembers a SourceRef whose id is not in the set yet.
func (s *sourceSet) add(r SourceRef) {
	s.refs = append(s.refs, r)
	switch n := len(s.refs); {
	case n == smallSet+1:
		s.index = make(map[string]int, 2*n)
		for i := range s.refs {
			s.index[s.refs[i].SourceID] = i
		}
	case n > smallSet+1:
		s.index[r.SourceID] = n - 1
	}
}
