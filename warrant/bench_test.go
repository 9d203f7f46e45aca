package warrant_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/internal/sharedtest"
	"github.com/ewp-go/ewp/warrant"
)

// packFixtures loads the reference pack's fixture documents from ../shared
// when present; the benchmark measures decode + validate + evaluate.
func packFixtures(b *testing.B) [][]byte {
	var docs [][]byte
	for _, f := range sharedtest.PackFiles(b, sharedtest.Path(b, "ewp-pack"), "fixtures") {
		docs = append(docs, f.Data)
	}
	return docs
}

func BenchmarkPackFixtures(b *testing.B) {
	docs := packFixtures(b)
	var bytes int
	for _, d := range docs {
		bytes += len(d)
	}
	b.SetBytes(int64(bytes / len(docs)))
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
	b.ResetTimer()
	// A stream of views is decoded with one Decoder, as eval and ingest do.
	var dec warrant.Decoder
	for i := 0; i < b.N; i++ {
		doc, err := dec.DecodeDocument(docs[i%len(docs)])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := warrant.Evaluate(doc.View, doc.EvaluatedAt); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if cpu1, ok := processCPU(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

// bigView builds a deterministic view of n records: assertions, evidence
// and checks from 50 sources over 10 lineages, a few conflicts and
// lineage edges.
func bigView(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"proposition_id":"P-big","evaluated_at":"2026-09-21T00:00:00Z","subjects":["host-1"],`)
	src := func(i int) string {
		return fmt.Sprintf(`{"source_id":"s%d","lineage_id":"L%d","origin_type":"tool","origin_locator":"loc:%d","snapshot_id":"snap:%d","content_hash":"sha256:%d","observed_at":"2026-09-01T00:00:00Z"}`, i%50, i%50%10, i%50, i%50, i%50)
	}
	third := n / 3
	b.WriteString(`"assertions":[`)
	for i := 0; i < third; i++ {
		sep(&b, i)
		fmt.Fprintf(&b, `{"assertion_id":"a%d","text":"claim %d","asserted_by":"agent","assertion_confidence":0.%d,"asserted_at":"2026-09-0%dT10:00:00Z","source":%s}`, i, i, i%10, 1+i%9, src(i))
	}
	b.WriteString(`],"evidence":[`)
	for i := 0; i < third; i++ {
		sep(&b, i)
		fmt.Fprintf(&b, `{"evidence_id":"e%d","polarity":"supports","content":"obs %d","observed_at":"2026-09-1%dT10:00:00+02:00","source":%s}`, i, i, i%10, src(i))
	}
	b.WriteString(`],"checks":[`)
	for i := 0; i < n-2*third; i++ {
		sep(&b, i)
		fmt.Fprintf(&b, `{"check_id":"k%d","method":"tool_observation","scope":"host-1","subjects":["HOST-1"],"result":"supports","observed_at":"2026-09-20T%02d:00:00Z","source":%s}`, i, i%24, src(i))
	}
	b.WriteString(`],"conflicts":[{"conflict_id":"c1","status":"resolved","proposition_ids":["P-big","P-other"]}],`)
	b.WriteString(`"lineage":[{"kind":"derived_from","from_id":"P-big","to_id":"P-base"}]}`)
	return []byte(b.String())
}

func sep(b *strings.Builder, i int) {
	if i > 0 {
		b.WriteByte(',')
	}
}

func BenchmarkView1000Records(b *testing.B) {
	doc := bigView(1000)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d, err := warrant.DecodeDocument(doc)
		if err != nil {
			b.Fatal(err)
		}
		w, err := warrant.Evaluate(d.View, d.EvaluatedAt)
		if err != nil || w.Warrant.Acceptance != warrant.Accepted {
			b.Fatalf("%v %+v", err, w)
		}
	}
}

// BenchmarkDecodeViewOneShot decodes each view with the package-level
// DecodeView, as a server decoding one stored view per request does.
func BenchmarkDecodeViewOneShot(b *testing.B) {
	docs := packFixtures(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := warrant.DecodeView(docs[i%len(docs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLargeSubjects evaluates a view of 10,000 subjects with one
// trusted check of 10,000 other subjects: subject matching at scale.
func BenchmarkLargeSubjects(b *testing.B) {
	v := &warrant.View{PropositionID: "P", RetrievalScope: warrant.DefaultRetrievalScope, Freshness: 2592000}
	c := warrant.Check{CheckID: "k", Method: "tool_observation", Result: warrant.Supports,
		ObservedAt: "2026-09-01T00:00:00Z", Source: warrant.SourceRef{OriginType: "tool", LineageID: "L"}}
	for i := range 10000 {
		v.Subjects = append(v.Subjects, fmt.Sprintf("Host-%d", i))
		c.Subjects = append(c.Subjects, fmt.Sprintf("Other-%d", i))
	}
	v.Checks = []warrant.Check{c}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := warrant.Evaluate(v, "2026-09-21T00:00:00Z"); err != nil {
			b.Fatal(err)
		}
	}
}
