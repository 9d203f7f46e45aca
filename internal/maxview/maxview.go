// Package maxview builds the largest EvidenceView a set of warrant.Limits
// admits, as near every limit at once as they allow: the view's and one
// trusted check's subjects lists full (none shared, so subject matching
// must look at all of them), records up to MaxRecords in a mix of every
// kind, then adapter_meta filled with strings of MaxStringBytes up to
// MaxViewBytes. The measurement in scripts/maxview and the test in
// mcp/ledgerstore use it; nothing else should.
package maxview

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/warrant"
)

// PropositionID is the id of every view this package builds.
const PropositionID = "P-max"

// Shape says what Build put into a view.
type Shape struct {
	Bytes, Records, ViewSubjects, CheckSubjects, MetaStrings int
}

// Build returns a view within lim (zero fields are the defaults; negative
// ones are not supported) and what it holds. The view is compact JSON
// with view_id vid. size is how the limit on bytes is counted: nil for
// the JSON text itself (an inline view), or StoredSize for a view to be
// stored: a ledger holds its stored form to the limit, and that form
// (spaces after separators, defaults written out) is about a quarter
// longer than compact JSON. Build gives as many of the records as fit the large kinds
// (checks, assertions, evidence) while leaving room for four strings of
// MaxStringBytes in adapter_meta; the rest are conflicts and lineage
// edges.
func Build(lim warrant.Limits, vid string, size func([]byte) int) ([]byte, Shape) {
	lim = orDefaults(lim)
	if size == nil {
		size = func(b []byte) int { return len(b) }
	}
	room := lim.MaxViewBytes - 4*lim.MaxStringBytes
	// The size grows about linearly with the large records: estimate
	// their number from both ends, then step down while over.
	at := func(large int) int { v, _ := build(lim, vid, large, 0); return size(v) }
	most := lim.MaxRecords - 1
	s0, s1 := at(0), at(most)
	lo := most
	if s1 > room {
		per := float64(s1-s0) / float64(most)
		lo = max(0, int(float64(room-s0)/per))
		for n := at(lo); n > room && lo > 0; n = at(lo) {
			lo = max(0, lo-int(float64(n-room)/per)-1)
		}
	}
	v, sh := build(lim, vid, lo, 0)
	meta := lim.MaxViewBytes - size(v)
	for meta > 0 {
		v, sh = build(lim, vid, lo, meta)
		over := size(v) - lim.MaxViewBytes
		if over <= 0 {
			break
		}
		meta -= over
	}
	return v, sh
}

// build writes the view with large of its records checks, assertions and
// evidence, the rest up to MaxRecords conflicts and lineage edges, and
// meta bytes of strings in adapter_meta.
func build(lim warrant.Limits, vid string, large, meta int) ([]byte, Shape) {
	var b bytes.Buffer
	sh := Shape{ViewSubjects: lim.MaxSubjects, CheckSubjects: lim.MaxSubjects}
	b.WriteString(`{"proposition_id":"` + PropositionID + `","view_id":"` + vid + `","subjects":`)
	subjects(&b, "host-", lim.MaxSubjects)
	// The trusted check whose subjects share nothing with the view's.
	b.WriteString(`,"checks":[{"check_id":"k-big","method":"tool_observation","scope":"fleet","result":"supports",` +
		`"observed_at":"2026-09-01T00:00:00Z","source":` + source(0) + `,"subjects":`)
	subjects(&b, "other-", lim.MaxSubjects)
	b.WriteString(`}`)
	lists := records(large, lim.MaxRecords-1-large)
	sh.Records = 1 + large + lists.light
	b.WriteString(lists.checks.String())
	b.WriteString(`]`)
	for _, l := range []struct {
		name string
		buf  *bytes.Buffer
	}{{"assertions", &lists.assertions}, {"evidence", &lists.evidence}, {"conflicts", &lists.conflicts}, {"lineage", &lists.lineage}} {
		b.WriteString(`,"` + l.name + `":[`)
		b.Write(bytes.TrimPrefix(l.buf.Bytes(), []byte(",")))
		b.WriteString(`]`)
	}
	b.WriteString(`,"adapter_meta":{`)
	for k := 0; meta > 0; k++ {
		if k > 0 {
			b.WriteString(",")
		}
		n := min(meta, lim.MaxStringBytes)
		b.WriteString(`"m` + strconv.Itoa(k) + `":"` + strings.Repeat("x", n) + `"`)
		meta -= n
		sh.MetaStrings++
	}
	b.WriteString(`}}`)
	sh.Bytes = b.Len()
	return b.Bytes(), sh
}

// Over returns a view just over one limit of lim (the zero fields read
// as the defaults): which is "bytes", "records", "subjects" or "string".
func Over(lim warrant.Limits, which string) []byte {
	lim = orDefaults(lim)
	switch which {
	case "bytes":
		lim.MaxViewBytes++
		v, _ := Build(lim, "v-over-bytes", nil)
		return v
	case "records":
		var b bytes.Buffer
		b.WriteString(`{"proposition_id":"` + PropositionID + `","view_id":"v-over-records","lineage":[`)
		for i := range lim.MaxRecords + 1 {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"kind":"derived_from","from_id":"` + PropositionID + `","to_id":"d` + strconv.Itoa(i) + `"}`)
		}
		b.WriteString(`]}`)
		return b.Bytes()
	case "subjects":
		var b bytes.Buffer
		b.WriteString(`{"proposition_id":"` + PropositionID + `","view_id":"v-over-subjects","subjects":`)
		subjects(&b, "host-", lim.MaxSubjects+1)
		b.WriteString(`}`)
		return b.Bytes()
	case "string":
		return []byte(`{"proposition_id":"` + PropositionID + `","view_id":"v-over-string","adapter_meta":{"m":"` +
			strings.Repeat("x", lim.MaxStringBytes+1) + `"}}`)
	}
	panic("maxview.Over: unknown limit " + which)
}

func orDefaults(l warrant.Limits) warrant.Limits {
	d := warrant.DefaultLimits
	if l.MaxViewBytes == 0 {
		l.MaxViewBytes = d.MaxViewBytes
	}
	if l.MaxRecords == 0 {
		l.MaxRecords = d.MaxRecords
	}
	if l.MaxSubjects == 0 {
		l.MaxSubjects = d.MaxSubjects
	}
	if l.MaxStringBytes == 0 {
		l.MaxStringBytes = d.MaxStringBytes
	}
	return l
}

func subjects(b *bytes.Buffer, prefix string, n int) {
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + prefix + strconv.Itoa(i) + `"`)
	}
	b.WriteString("]")
}

// source is SourceRef i, trusted (a tool) when i is even.
func source(i int) string {
	origin := "turn"
	if i%2 == 0 {
		origin = "tool"
	}
	s := strconv.Itoa(i)
	return `{"source_id":"s` + s + `","lineage_id":"L` + s + `","origin_type":"` + origin +
		`","origin_locator":"l` + s + `","snapshot_id":"n` + s + `","content_hash":"h` + s +
		`","observed_at":"20260901"}`
}

// recordLists are the records of each kind, each entry with a leading
// comma.
type recordLists struct {
	checks, assertions, evidence, conflicts, lineage bytes.Buffer
	light                                            int
}

// records writes large checks, assertions and evidence items in turn,
// then light conflicts and lineage edges in turn.
func records(large, light int) *recordLists {
	r := &recordLists{light: light}
	for i := 1; i <= large+light; i++ {
		s := strconv.Itoa(i)
		switch {
		case i <= large && i%3 == 0:
			r.checks.WriteString(`,{"check_id":"k` + s + `","method":"tool_observation","scope":"f","result":"` +
				[]string{"supports", "opposes", "inconclusive"}[i%9/3] + `","observed_at":"2026-09-0` + strconv.Itoa(1+i%9) +
				`T00:00:00Z","source":` + source(i) + `}`)
		case i <= large && i%3 == 1:
			r.assertions.WriteString(`,{"assertion_id":"a` + s + `","text":"t` + s + `","asserted_by":"agent",` +
				`"assertion_confidence":0.7,"asserted_at":"20260901","source":` + source(i) + `}`)
		case i <= large:
			r.evidence.WriteString(`,{"evidence_id":"e` + s + `","polarity":"` + []string{"supports", "opposes"}[i%2] +
				`","content":"c","observed_at":"20260901","source":` + source(i) + `}`)
		case i%2 == 0:
			r.conflicts.WriteString(`,{"conflict_id":"c` + s + `","status":"` + []string{"open", "resolved"}[i/2%2] +
				`","proposition_ids":["` + PropositionID + `","` + PropositionID + `:v` + s + `"]}`)
		default:
			r.lineage.WriteString(`,{"kind":"` + []string{"derived_from", "supersedes", "superseded_by", "parent_source"}[i/2%4] +
				`","from_id":"` + PropositionID + `","to_id":"P-` + s + `"}`)
		}
	}
	return r
}

// StoredSize is the length of b's stored form (warrant.Encode), the size a
// ledger holds to MaxViewBytes; b may be over MaxViewBytes as text. It
// panics if b is not a view, which Build never makes.
func StoredSize(b []byte) int {
	d := warrant.Decoder{Limits: warrant.Limits{MaxViewBytes: -1}}
	v, err := d.DecodeView(b)
	if err != nil {
		panic("maxview: " + err.Error())
	}
	return len(warrant.Encode(v))
}
