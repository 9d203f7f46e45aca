package snapshot

import (
	"fmt"
	"slices"

	"github.com/ewp-go/ewp/warrant"
)

// Records are what one append adds to the latest snapshot. Empty strings
// mean "missing": incremental writes come from MCP arguments or ingest
// flags where a field is either given or absent.
type Records struct {
	Assertions []warrant.Assertion
	Evidence   []warrant.Evidence
	Checks     []warrant.Check
}

// AppendEvidence is Append with one evidence item.
func AppendEvidence(latest *warrant.View, e warrant.Evidence) (*warrant.View, error) {
	return Append(latest, Records{Evidence: []warrant.Evidence{e}})
}

// AppendCheck is Append with one check.
func AppendCheck(latest *warrant.View, c warrant.Check) (*warrant.View, error) {
	return Append(latest, Records{Checks: []warrant.Check{c}})
}

// Append returns a new snapshot: latest plus the records, with the
// SourceRef defaults of §10 filled and a view id derived from the content
// (warrant.DerivedViewID). The result has been through warrant.DecodeView,
// so it is valid and equal to what a store will read back.
//
// latest == nil is refused with CodeMissingView: an append extends a
// stored proposition and never creates one. When latest already holds
// every record unchanged, Append returns latest itself (a retry is a
// no-op); a record id that latest holds with other content is refused with
// CodeImmutableRecord. The store must still run [Check] against the
// proposition's whole history and must read latest and store the result in
// one write transaction.
func Append(latest *warrant.View, r Records) (*warrant.View, error) {
	if latest == nil {
		return nil, &warrant.Error{Code: warrant.CodeMissingView, Field: "proposition_id",
			Rule: "no stored snapshot to append to; store a view for this proposition first"}
	}
	r, err := fillRecords(latest.PropositionID, r)
	if err != nil {
		return nil, err
	}
	idx := Map{}
	idx.Add(latest.ViewID, Fingerprints(latest))
	fresh, err := newRecords(idx, r)
	if err != nil {
		return nil, err
	}
	if fresh.empty() {
		return latest, nil
	}
	return build(latest, fresh)
}

func (r Records) empty() bool {
	return len(r.Assertions) == 0 && len(r.Evidence) == 0 && len(r.Checks) == 0
}

// newRecords drops the records latest already holds unchanged and refuses
// the ones it holds with other content.
func newRecords(idx Map, r Records) (Records, error) {
	probe := &warrant.View{Assertions: r.Assertions, Evidence: r.Evidence, Checks: r.Checks}
	fps := Fingerprints(probe)
	for _, f := range fps {
		if err := checkOne(idx, f); err != nil {
			return Records{}, err
		}
	}
	var out Records
	for _, a := range r.Assertions {
		if _, ok := idx[Key{KindAssertion, a.AssertionID}]; !ok {
			out.Assertions = append(out.Assertions, a)
		}
	}
	for _, e := range r.Evidence {
		if _, ok := idx[Key{KindEvidence, e.EvidenceID}]; !ok {
			out.Evidence = append(out.Evidence, e)
		}
	}
	for _, c := range r.Checks {
		if _, ok := idx[Key{KindCheck, c.CheckID}]; !ok {
			out.Checks = append(out.Checks, c)
		}
	}
	return out, nil
}

// build copies latest (never aliasing its slices, which a store may cache)
// and appends the records.
func build(latest *warrant.View, r Records) (*warrant.View, error) {
	next := *latest
	next.Assertions = append(slices.Clone(latest.Assertions), r.Assertions...)
	next.Evidence = append(slices.Clone(latest.Evidence), r.Evidence...)
	next.Checks = append(slices.Clone(latest.Checks), r.Checks...)
	next.ViewID = warrant.DerivedViewID(&next)
	next.ViewIDDerived = true
	out, err := warrant.DecodeView(warrant.Encode(&next))
	if err != nil {
		return nil, err
	}
	out.ViewIDDerived = true
	return out, nil
}

// fillRecords applies the §10 incremental-write rules to every record.
func fillRecords(prop string, r Records) (Records, error) {
	var out Records
	for i, a := range r.Assertions {
		a, err := fillAssertion(prop, a, field("assertion", i, len(r.Assertions)))
		if err != nil {
			return out, err
		}
		out.Assertions = append(out.Assertions, a)
	}
	for i, e := range r.Evidence {
		e, err := fillEvidence(prop, e, field("evidence", i, len(r.Evidence)))
		if err != nil {
			return out, err
		}
		out.Evidence = append(out.Evidence, e)
	}
	for i, c := range r.Checks {
		c, err := fillCheck(c, field("check", i, len(r.Checks)))
		if err != nil {
			return out, err
		}
		out.Checks = append(out.Checks, c)
	}
	return out, nil
}

// field names an appended record: "evidence" for the usual single record,
// "evidence[1]" when several are appended at once.
func field(name string, i, n int) string {
	if n == 1 {
		return name
	}
	return fmt.Sprintf("%s[%d]", name, i)
}

func fillAssertion(prop string, a warrant.Assertion, f string) (warrant.Assertion, error) {
	if err := required(f+".assertion_id", a.AssertionID); err != nil {
		return a, err
	}
	if err := required(f+".text", a.Text); err != nil {
		return a, err
	}
	if err := required(f+".asserted_by", a.AssertedBy); err != nil {
		return a, err
	}
	if a.AssertedAt == "" {
		return a, missingTime(f + ".asserted_at")
	}
	if a.PropositionID == "" {
		a.PropositionID = prop
	}
	var err error
	a.Source, err = FillSource(a.AssertionID, a.Source, f+".source")
	return a, err
}

func fillEvidence(prop string, e warrant.Evidence, f string) (warrant.Evidence, error) {
	if err := required(f+".evidence_id", e.EvidenceID); err != nil {
		return e, err
	}
	if e.Polarity == "" {
		return e, &warrant.Error{Code: warrant.CodeInvalidView, Field: f + ".polarity",
			Rule: "polarity is required (supports or opposes); it is never assumed"}
	}
	if err := required(f+".content", e.Content); err != nil {
		return e, err
	}
	if e.ObservedAt == "" {
		return e, missingTime(f + ".observed_at")
	}
	if e.PropositionID == "" {
		e.PropositionID = prop
	}
	var err error
	e.Source, err = FillSource(e.EvidenceID, e.Source, f+".source")
	return e, err
}

func fillCheck(c warrant.Check, f string) (warrant.Check, error) {
	for _, kv := range [][2]string{{".check_id", c.CheckID}, {".method", c.Method}, {".scope", c.Scope}, {".result", c.Result}} {
		if err := required(f+kv[0], kv[1]); err != nil {
			return c, err
		}
	}
	if c.ObservedAt == "" {
		return c, missingTime(f + ".observed_at")
	}
	var err error
	c.Source, err = FillSource(c.CheckID, c.Source, f+".source")
	return c, err
}

// FillSource applies the SourceRef rules of incremental writes (§10): the
// provenance that only the writer can know (content_hash, observed_at) is
// required, and the identifying fields default — source_id to the record
// id, lineage_id and snapshot_id to source_id, origin_type to "extract"
// (untrusted, so a default never confers verification) and origin_locator
// to "mcp:<source_id>". field is the path used in refusals.
func FillSource(recordID string, s warrant.SourceRef, field string) (warrant.SourceRef, error) {
	if s.ContentHash == "" {
		return s, &warrant.Error{Code: warrant.CodeMissingContentHash, Field: field + ".content_hash",
			Rule: "source.content_hash is required on an incremental write: give the hash of the content the record was taken from"}
	}
	if s.ObservedAt == "" {
		return s, missingTime(field + ".observed_at")
	}
	if s.SourceID == "" {
		s.SourceID = recordID
	}
	if s.LineageID == "" {
		s.LineageID = s.SourceID
	}
	if s.SnapshotID == "" {
		s.SnapshotID = s.SourceID
	}
	if s.OriginType == "" {
		s.OriginType = "extract"
	}
	if s.OriginLocator == "" {
		s.OriginLocator = "mcp:" + s.SourceID
	}
	return s, nil
}

func required(field, v string) error {
	if v != "" {
		return nil
	}
	return &warrant.Error{Code: warrant.CodeInvalidView, Field: field, Rule: "required on an appended record (present and non-empty)"}
}

func missingTime(field string) error {
	return &warrant.Error{Code: warrant.CodeMissingObservedAt, Field: field,
		Rule: "a time is required on an incremental write: give the instant the record was observed; it is never invented"}
}
