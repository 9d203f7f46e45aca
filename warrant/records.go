package warrant

import (
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/warrant/internal/pyjson"
)

func (d *decoder) records(obj *pyjson.Value, v *View) error {
	steps := []func(*pyjson.Value, *View) error{
		d.assertions, d.evidence, d.checks, d.conflicts, d.lineage,
	}
	for _, step := range steps {
		if err := step(obj, v); err != nil {
			return err
		}
	}
	return nil
}

func indexPath(key string, i int) string { return key + "[" + strconv.Itoa(i) + "]" }

// bounded reports whether id is the view's proposition or a variant P:<suffix>.
func (d *decoder) bounded(id string) bool {
	return id == d.prop || (len(id) > len(d.prop) && id[len(d.prop)] == ':' && strings.HasPrefix(id, d.prop))
}

func (d *decoder) recordProposition(obj *pyjson.Value, path string) (string, error) {
	p, ok := optText(obj, "proposition_id")
	if !ok {
		return d.prop, nil
	}
	if !d.bounded(p) {
		return "", invalid(path+".proposition_id",
			"names proposition %s; a view holds only %s or its variants %s:<suffix>", pyjson.StrRepr(p), pyjson.StrRepr(d.prop), d.prop)
	}
	return p, nil
}

type dupSet map[string]struct{}

func (s dupSet) add(id, path, kind string) error {
	if _, seen := s[id]; seen {
		return invalid(path, "duplicate %s id %s (ids are unique within a view)", kind, pyjson.StrRepr(id))
	}
	s[id] = struct{}{}
	return nil
}

func (d *decoder) assertions(obj *pyjson.Value, v *View) error {
	list, err := recordList(obj, "assertions")
	if err != nil {
		return err
	}
	v.Assertions = make([]Assertion, len(list))
	seen := dupSet{}
	for i := range list {
		path := indexPath("assertions", i)
		a, err := d.assertion(&list[i], path)
		if err != nil {
			return err
		}
		if err := seen.add(a.AssertionID, path+".assertion_id", "assertion"); err != nil {
			return err
		}
		v.Assertions[i] = a
	}
	return nil
}

func (d *decoder) assertion(obj *pyjson.Value, path string) (a Assertion, err error) {
	if a.AssertionID, err = reqText(obj, "assertion_id", path); err != nil {
		return
	}
	if a.Text, err = reqText(obj, "text", path); err != nil {
		return
	}
	if a.AssertedBy, err = reqText(obj, "asserted_by", path); err != nil {
		return
	}
	if a.Confidence, err = confidence(obj, path); err != nil {
		return
	}
	if a.Source, err = d.source(obj, path); err != nil {
		return
	}
	if a.AssertedAt, err = reqText(obj, "asserted_at", path); err != nil {
		return
	}
	a.PropositionID, err = d.recordProposition(obj, path)
	return
}

func confidence(obj *pyjson.Value, path string) (float64, error) {
	x, ok := obj.Get("assertion_confidence")
	if !ok || x.IsNull() {
		return 0, invalid(path+".assertion_confidence", "is required (present and not null)")
	}
	n, ok := finiteNumber(x)
	if !ok {
		return 0, invalid(path+".assertion_confidence", "must be a finite number, not %s", describe(x))
	}
	return n, nil
}

func describe(x pyjson.Value) string {
	if x.Kind == pyjson.Int || x.Kind == pyjson.Float {
		return "out-of-range number " + x.Str
	}
	return typeName(x)
}

func (d *decoder) evidence(obj *pyjson.Value, v *View) error {
	list, err := recordList(obj, "evidence")
	if err != nil {
		return err
	}
	v.Evidence = make([]Evidence, len(list))
	seen := dupSet{}
	for i := range list {
		path := indexPath("evidence", i)
		e, err := d.evidenceItem(&list[i], path)
		if err != nil {
			return err
		}
		if err := seen.add(e.EvidenceID, path+".evidence_id", "evidence"); err != nil {
			return err
		}
		v.Evidence[i] = e
	}
	return nil
}

func (d *decoder) evidenceItem(obj *pyjson.Value, path string) (e Evidence, err error) {
	if e.EvidenceID, err = reqText(obj, "evidence_id", path); err != nil {
		return
	}
	if e.Polarity, err = enumField(obj, "polarity", path, Supports, Opposes); err != nil {
		return
	}
	if e.Source, err = d.source(obj, path); err != nil {
		return
	}
	if e.Content, err = reqText(obj, "content", path); err != nil {
		return
	}
	if e.ObservedAt, err = reqText(obj, "observed_at", path); err != nil {
		return
	}
	e.PropositionID, err = d.recordProposition(obj, path)
	return
}

func (d *decoder) checks(obj *pyjson.Value, v *View) error {
	list, err := recordList(obj, "checks")
	if err != nil {
		return err
	}
	v.Checks = make([]Check, len(list))
	seen := dupSet{}
	for i := range list {
		path := indexPath("checks", i)
		c, err := d.check(&list[i], path)
		if err != nil {
			return err
		}
		if err := seen.add(c.CheckID, path+".check_id", "check"); err != nil {
			return err
		}
		v.Checks[i] = c
	}
	return nil
}

func (d *decoder) check(obj *pyjson.Value, path string) (c Check, err error) {
	if c.CheckID, err = reqText(obj, "check_id", path); err != nil {
		return
	}
	if c.Method, err = reqText(obj, "method", path); err != nil {
		return
	}
	if c.Scope, err = reqText(obj, "scope", path); err != nil {
		return
	}
	if c.Source, err = d.source(obj, path); err != nil {
		return
	}
	if c.ObservedAt, err = reqText(obj, "observed_at", path); err != nil {
		return
	}
	if c.Result, err = enumField(obj, "result", path, Supports, Opposes, Inconclusive); err != nil {
		return
	}
	c.Subjects, err = stringList(obj, "subjects", path+".subjects")
	return
}

func (d *decoder) conflicts(obj *pyjson.Value, v *View) error {
	list, err := recordList(obj, "conflicts")
	if err != nil {
		return err
	}
	v.Conflicts = make([]Conflict, len(list))
	seen := dupSet{}
	for i := range list {
		path := indexPath("conflicts", i)
		c, err := d.conflict(&list[i], path)
		if err != nil {
			return err
		}
		if err := seen.add(c.ConflictID, path+".conflict_id", "conflict"); err != nil {
			return err
		}
		v.Conflicts[i] = c
	}
	return nil
}

func (d *decoder) conflict(obj *pyjson.Value, path string) (c Conflict, err error) {
	if c.ConflictID, err = reqText(obj, "conflict_id", path); err != nil {
		return
	}
	if c.Status, err = enumField(obj, "status", path, StatusOpen, StatusResolved); err != nil {
		return
	}
	if c.PropositionIDs, err = stringList(obj, "proposition_ids", path+".proposition_ids"); err != nil {
		return
	}
	if len(c.PropositionIDs) == 0 {
		err = invalid(path+".proposition_ids", "must name at least one proposition")
		return
	}
	if !d.namesView(c.PropositionIDs) {
		err = invalid(path+".proposition_ids", "must name %s or a variant %s:<suffix>", pyjson.StrRepr(d.prop), d.prop)
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
func note(obj *pyjson.Value) string {
	x, ok := obj.Get("note")
	if !ok || falsy(x) {
		return ""
	}
	return pyjson.Str(x)
}

func falsy(x pyjson.Value) bool {
	switch x.Kind {
	case pyjson.Null:
		return true
	case pyjson.Bool:
		return !x.Bool
	case pyjson.Int, pyjson.Float:
		return x.Float == 0
	case pyjson.String:
		return x.Str == ""
	case pyjson.Array:
		return len(x.Arr) == 0
	}
	return len(x.Obj) == 0
}

func (d *decoder) lineage(obj *pyjson.Value, v *View) error {
	list, err := recordList(obj, "lineage")
	if err != nil {
		return err
	}
	v.Lineage = make([]LineageEdge, len(list))
	for i := range list {
		path := indexPath("lineage", i)
		e := &v.Lineage[i]
		if e.Kind, err = enumField(&list[i], "kind", path, KindDerivedFrom, KindSupersedes, KindSupersededBy, KindParentSource); err != nil {
			return err
		}
		if e.FromID, err = endpoint(&list[i], "from_id", path); err != nil {
			return err
		}
		if e.ToID, err = endpoint(&list[i], "to_id", path); err != nil {
			return err
		}
	}
	return nil
}

func endpoint(obj *pyjson.Value, key, path string) (string, error) {
	x, ok := obj.Get(key)
	if !ok || x.Kind != pyjson.String || x.Str == "" {
		return "", invalid(path+"."+key, "must be a non-empty string, not %s", typeNameOrMissing(x, ok))
	}
	return x.Str, nil
}

func typeNameOrMissing(x pyjson.Value, ok bool) string {
	if !ok {
		return "missing"
	}
	return typeName(x)
}

// source decodes a record's SourceRef and enforces that one source_id
// names one SourceRef across the whole view.
func (d *decoder) source(rec *pyjson.Value, path string) (SourceRef, error) {
	x, ok := rec.Get("source")
	path += ".source"
	if !ok || x.IsNull() {
		return SourceRef{}, invalid(path, "is required (present and not null)")
	}
	if x.Kind != pyjson.Object {
		return SourceRef{}, invalid(path, "must be an object, not %s", typeName(x))
	}
	s, err := sourceRef(&x, path)
	if err != nil {
		return s, err
	}
	if d.sources == nil {
		d.sources = map[string]SourceRef{}
		d.where = map[string]string{}
	}
	if prev, seen := d.sources[s.SourceID]; seen {
		if !sameSource(prev, s) {
			return s, invalid(path, "source_id %s already names a different SourceRef at %s (one source_id, one SourceRef)",
				pyjson.StrRepr(s.SourceID), d.where[s.SourceID])
		}
		return s, nil
	}
	d.sources[s.SourceID] = s
	d.where[s.SourceID] = path
	return s, nil
}

func sourceRef(x *pyjson.Value, path string) (s SourceRef, err error) {
	fields := []struct {
		key string
		dst *string
	}{
		{"source_id", &s.SourceID}, {"lineage_id", &s.LineageID}, {"origin_type", &s.OriginType},
		{"origin_locator", &s.OriginLocator}, {"snapshot_id", &s.SnapshotID},
		{"content_hash", &s.ContentHash}, {"observed_at", &s.ObservedAt},
	}
	for _, f := range fields {
		if *f.dst, err = reqText(x, f.key, path); err != nil {
			return
		}
	}
	s.ExtractorID = optPtr(x, "extractor_id")
	s.ParentSourceID = optPtr(x, "parent_source_id")
	return
}

func optPtr(x *pyjson.Value, key string) *string {
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
