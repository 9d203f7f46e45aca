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
// with view_id vid.
func Build(lim warrant.Limits, vid string) ([]byte, Shape) {
	lim = orDefaults(lim)
	var b bytes.Buffer
	sh := Shape{ViewSubjects: lim.MaxSubjects, CheckSubjects: lim.MaxSubjects}
	b.WriteString(`{"proposition_id":"` + PropositionID + `","view_id":"` + vid + `","subjects":`)
	subjects(&b, "host-", lim.MaxSubjects)
	// The trusted check whose subjects share nothing with the view's.
	b.WriteString(`,"checks":[{"check_id":"k-big","method":"tool_observation","scope":"fleet","result":"supports",` +
		`"observed_at":"2026-09-01T00:00:00Z","source":` + source(0) + `,"subjects":`)
	subjects(&b, "other-", lim.MaxSubjects)
	b.WriteString(`}`)
	sh.Records = 1
	// Keep room for the other lists' brackets and one adapter_meta entry.
	budget := lim.MaxViewBytes - 200
	lists := records(lim.MaxRecords-1, budget-b.Len())
	sh.Records += lists.n
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
	for k := 0; ; k++ {
		key := `"m` + strconv.Itoa(k) + `":"`
		room := lim.MaxViewBytes - b.Len() - len(key) - 4 // closing quote, braces, a comma
		if room <= 0 {
			break
		}
		if k > 0 {
			b.WriteString(",")
		}
		b.WriteString(key)
		b.WriteString(strings.Repeat("x", min(room, lim.MaxStringBytes)))
		b.WriteString(`"`)
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
		v, _ := Build(lim, "v-over-bytes")
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
	n                                                int
}

// records writes up to n records, one of each kind in turn (lineage
// edges, the smallest, twice), while they fit in budget bytes.
func records(n, budget int) *recordLists {
	r := &recordLists{}
	used := 0
	for i := 1; r.n < n; i++ {
		s := strconv.Itoa(i)
		var buf *bytes.Buffer
		var rec string
		switch i % 6 {
		case 0:
			buf, rec = &r.checks, `{"check_id":"k`+s+`","method":"tool_observation","scope":"f","result":"`+
				[]string{"supports", "opposes", "inconclusive"}[i%3]+`","observed_at":"2026-09-0`+strconv.Itoa(1+i%9)+
				`T00:00:00Z","source":`+source(i)+`}`
		case 1:
			buf, rec = &r.assertions, `{"assertion_id":"a`+s+`","text":"host-`+s+` runs the service","asserted_by":"agent",`+
				`"assertion_confidence":0.7,"asserted_at":"2026-09-01T00:00:00Z","source":`+source(i)+`}`
		case 2:
			buf, rec = &r.evidence, `{"evidence_id":"e`+s+`","polarity":"`+[]string{"supports", "opposes"}[i%2]+
				`","content":"c","observed_at":"20260901","source":`+source(i)+`}`
		case 3:
			buf, rec = &r.conflicts, `{"conflict_id":"c`+s+`","status":"`+[]string{"open", "resolved"}[i%2]+
				`","proposition_ids":["`+PropositionID+`","`+PropositionID+`:v`+s+`"]}`
		case 4, 5:
			buf, rec = &r.lineage, `{"kind":"`+[]string{"derived_from", "supersedes", "superseded_by", "parent_source"}[i%4]+
				`","from_id":"`+PropositionID+`","to_id":"P-`+s+`"}`
		}
		if used+len(rec)+1 > budget {
			break
		}
		buf.WriteString("," + rec)
		used += len(rec) + 1
		r.n++
	}
	return r
}
