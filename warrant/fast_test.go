package warrant

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/internal/sharedtest"
)

// fastAgrees decodes s with the fast path and, when it takes s, with the
// general path too, and fails the test unless both give the same
// document. It reports whether the fast path took s.
func fastAgrees(t testing.TB, s string) bool {
	t.Helper()
	var f fastDecoder
	fd := &Document{}
	v := f.decode(s+"\x00", fd)
	if v == nil {
		return false
	}
	fd.View = v
	var d Decoder
	gd, err := d.generalDocument(s, DefaultLimits)
	if err != nil {
		if CheckPolicy(fd.PolicyID, fd.PolicyVersion) != nil {
			return false // DecodeDocument refuses these before using the view
		}
		t.Errorf("fast path took a document the general path refuses (%v):\n%s", err, s)
		return true
	}
	if !reflect.DeepEqual(fd, gd) {
		t.Errorf("fast and general paths disagree on\n%s\nfast:    %+v\ngeneral: %+v", s, *fd.View, *gd.View)
	}
	// A decoder used once hands its scratch lists over; same view.
	once := fastDecoder{once: true}
	if ov := once.decode(s+"\x00", &Document{}); !reflect.DeepEqual(ov, v) {
		t.Errorf("a decoder used once decodes differently:\n%s", s)
	}
	// As a view (no document members), the two paths agree as well.
	gv, err := d.generalView(s, DefaultLimits)
	if fv := f.decode(s+"\x00", nil); err != nil || !reflect.DeepEqual(fv, gv) {
		t.Errorf("DecodeView paths disagree on\n%s (general: %v)", s, err)
	}
	return true
}

// The fast path must take what the general path accepts in the usual
// shape, or it is no faster; and where it takes a document it must agree
// with the general path exactly.
func TestFastPathAgreesOnPacks(t *testing.T) {
	for _, dir := range []string{"../fixtures/pack", sharedtest.Path(t, "ewp-pack")} {
		var taken, accepted int
		for _, sub := range []string{"fixtures", "invalid"} {
			for _, f := range sharedtest.PackFiles(t, dir, sub) {
				if fastAgrees(t, string(f.Data)) {
					taken++
				}
				if _, err := DecodeDocument(f.Data); err == nil {
					accepted++
				}
			}
		}
		t.Logf("%s: fast path took %d of %d accepted documents", dir, taken, accepted)
		if taken < accepted*9/10 {
			t.Errorf("%s: fast path took only %d of %d accepted documents", dir, taken, accepted)
		}
	}
}

func TestFastPathAgreesOnCorpus(t *testing.T) {
	taken, n := 0, 0
	sharedtest.EachCorpusCase(t, func(_ int, c sharedtest.CorpusCase) {
		n++
		if fastAgrees(t, string(c.Doc)) {
			taken++
		}
	})
	t.Logf("fast path took %d of %d corpus documents", taken, n)
}

// Inputs at the edges of what the fast path takes: each must either be
// left to the general path or decoded exactly as it decodes them.
func TestFastPathEdges(t *testing.T) {
	src := `{"source_id":"s1","lineage_id":"L1","origin_type":"tool","origin_locator":"loc","snapshot_id":"snap","content_hash":"h","observed_at":"2026-01-01T00:00:00Z"}`
	ev := `{"evidence_id":"e1","polarity":"supports","content":"c","observed_at":"2026-01-01T00:00:00Z","source":` + src + `}`
	base := `"proposition_id":"P","evaluated_at":"2026-06-01T00:00:00Z"`
	cases := []struct {
		doc  string
		fast bool // whether the fast path should take it
	}{
		{`{` + base + `,"evidence":[` + ev + `]}`, true},
		{` {` + base + `,"evidence":[` + ev + `]} ` + "\n", true},
		{`{` + base + `,"evidence":[` + ev + `],"evidence":[]}`, false},       // repeated member: last wins
		{`{` + base + `,"evidence":[` + ev + `],"evidence":null}`, false},     // repeated member
		{`{` + base + `,"\u0065vidence":[` + ev + `]}`, true},                 // escaped member name
		{`{` + base + `,"evidence":[` + ev + `,` + ev + `]}`, false},          // duplicate id
		{`{` + base + `,"evidence":[` + ev + `]]}`, false},                    // syntax
		{`{` + base + `,"evidence":[` + ev + `,]}`, false},                    // trailing comma
		{`{` + base + `,"evidence":[` + ev + `]`, false},                      // unterminated
		{`{` + base + `,"evidence":[` + ev + `]} x`, false},                   // extra data
		{`{` + base + `,"view_id":7}`, false},                                 // needs str()
		{`{` + base + `,"view_id":"\ud800"}`, true},                           // lone surrogate
		{`{` + base + `,"view_id":""}`, true},                                 // derived id
		{`{` + base + `,"subjects":null,"omitted_sources":["x"]}`, true},      //
		{`{` + base + `,"subjects":["a",""]}`, false},                         // empty subject
		{`{` + base + `,"freshness_policy_seconds":-0}`, true},                //
		{`{` + base + `,"freshness_policy_seconds":1e3}`, false},              // float
		{`{` + base + `,"freshness_policy_seconds":9007199254740992}`, false}, // too large
		{`{` + base + `,"degraded":null,"retrieval_scope":null}`, true},       //
		{`{` + base + `,"adapter_meta":{"b":[1,2.50,{"z":null}],"a":"\u00e9"}}`, true},
		{`{` + base + `,"adapter_meta":[]}`, false},
		{`{` + base + `,"unknown":{"deep":[[[{"x":"\n"}]]]}}`, true},
		{`{` + base + `,"unknown":{"deep":[[[{"x":"` + "\n" + `"}]]]}}`, false}, // raw control character
		{`{` + base + `,"policy_id":"reference-v2","policy_version":null}`, true},
		{`{` + base + `,"policy_id":"other"}`, false},
		{`{"proposition_id":"","evaluated_at":"2026-06-01T00:00:00Z"}`, false},
		{`{"evaluated_at":"2026-06-01T00:00:00Z"}`, false},
		{`{` + base + `,"conflicts":[{"conflict_id":"c","status":"open","proposition_ids":["Q","P:v"],"note":null}]}`, true},
		{`{` + base + `,"conflicts":[{"conflict_id":"c","status":"open","proposition_ids":["Q"]}]}`, false},
		{`{` + base + `,"conflicts":[{"conflict_id":"c","status":"open","proposition_ids":["P"],"note":0}]}`, false},
		{`{` + base + `,"lineage":[{"kind":"superseded_by","from_id":"P","to_id":"P2"}]}`, true},
		{`{` + base + `,"lineage":[{"kind":"superseded_by","from_id":"","to_id":"P2"}]}`, false},
		{`{` + base + `,"evidence":[` + strings.Replace(ev, `"supports"`, `"opposes","proposition_id":"P:x"`, 1) + `]}`, true},
		{`{` + base + `,"evidence":[` + strings.Replace(ev, `"supports"`, `"opposes","proposition_id":"Q"`, 1) + `]}`, false},
		{`{` + base + `,"evidence":[` + strings.Replace(ev, `"supports"`, `"opposes","proposition_id":""`, 1) + `]}`, false},
		{`{` + base + `,"evidence":[` + strings.Replace(ev, `"h"`, `"h","extractor_id":"x","parent_source_id":null`, 1) + `]}`, true},
		{`{` + base + `,"assertions":[{"assertion_id":"a","text":"t","asserted_by":"b","assertion_confidence":1,"asserted_at":"x","source":` + src + `}],"evidence":[` + ev + `]}`, true},
		{`{` + base + `,"assertions":[{"assertion_id":"a","text":"t","asserted_by":"b","assertion_confidence":1e400,"asserted_at":"x","source":` + src + `}]}`, false},
		{`{` + base + `,"assertions":[{"assertion_id":"a","text":"t","asserted_by":"b","assertion_confidence":0.5,"asserted_at":"x","source":` + strings.Replace(src, `"h"`, `"other"`, 1) + `}],"evidence":[` + ev + `]}`, false}, // one source_id, two SourceRefs
		{`{` + base + `,"checks":[{"check_id":"k","method":"m","scope":"s","result":"inconclusive","observed_at":"x","subjects":["A"],"source":` + src + `}]}`, true},
		{`{` + base + `,"checks":[{"check_id":"k","method":"m","scope":"s","result":"maybe","observed_at":"x","source":` + src + `}]}`, false},
		{`{` + base + `,"checks":[{"check_id":"k","method":"m","scope":"s","result":"supports","observed_at":"x"}]}`, false}, // no source
	}
	// Sources repeated word for word, and the same source written another way.
	srcX := strings.Replace(src, `"h"`, `"h","extractor_id":"x"`, 1)
	evX := func(id, s string) string {
		return `{"evidence_id":"` + id + `","polarity":"supports","content":"c","observed_at":"2026-01-01T00:00:00Z","source":` + s + `}`
	}
	spaced := strings.ReplaceAll(srcX, `,"`, `, "`)
	cases = append(cases, []struct {
		doc  string
		fast bool
	}{
		{`{` + base + `,"evidence":[` + evX("e1", srcX) + `,` + evX("e2", srcX) + `,` + evX("e3", spaced) + `,` + evX("e4", srcX) + `]}`, true},
		{`{` + base + `,"evidence":[` + evX("e1", srcX) + `,` + evX("e2", strings.Replace(srcX, `"x"`, `"y"`, 1)) + `]}`, false},
	}...)
	for _, c := range cases {
		if got := fastAgrees(t, c.doc); got != c.fast {
			t.Errorf("fast path took=%v, want %v, for\n%s", got, c.fast, c.doc)
		}
	}
}

// A view with many records and sources exercises the indexed paths.
func TestFastPathBigView(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"proposition_id":"P","evaluated_at":"2026-06-01T00:00:00Z","evidence":[`)
	for i := 0; i < 300; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		id := itoa(int64(i))
		b.WriteString(`{"evidence_id":"e` + id + `","polarity":"supports","content":"c","observed_at":"2026-01-01T00:00:00Z","source":{"source_id":"s` + itoa(int64(i%40)) + `","lineage_id":"L","origin_type":"tool","origin_locator":"loc","snapshot_id":"snap","content_hash":"h","observed_at":"x"}}`)
	}
	b.WriteString(`]}`)
	if !fastAgrees(t, b.String()) {
		t.Fatal("fast path did not take a large valid view")
	}
	dup := strings.Replace(b.String(), `"e299"`, `"e7"`, 1)
	if fastAgrees(t, dup) {
		t.Fatal("fast path took a large view with a duplicate id")
	}
}

func FuzzFastPath(f *testing.F) {
	for _, dir := range []string{"../fixtures/pack/fixtures", "../fixtures/pack/invalid"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, file := range files[:min(len(files), 40)] {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fastAgrees(t, string(data))
	})
}

// shortDecimal agrees with ParseFloat wherever it answers.
func FuzzShortDecimal(f *testing.F) {
	for _, s := range []string{"0.95", "1", "0", "0.1", "123456789012345", "0.000000000000001", "9.99999999999999", "1.", ".5", "-0.5", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := shortDecimal(s)
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || got != want {
			t.Fatalf("%q: shortDecimal %v, ParseFloat %v %v", s, got, want, err)
		}
	})
}

func TestShortDecimal(t *testing.T) {
	for i := 0; i < 200000; i++ {
		// Confidences as producers write them, and every fraction digit count.
		s := strconv.FormatFloat(float64(i)/float64(1+i%997), 'f', i%16, 64)
		if got, ok := shortDecimal(s); ok {
			if want, _ := strconv.ParseFloat(s, 64); got != want {
				t.Fatalf("%q: shortDecimal %v, ParseFloat %v", s, got, want)
			}
		}
	}
}

// Records that repeat a source word for word share nothing a caller could
// change through one of them.
func TestFastPathRepeatedSourcesShareNothing(t *testing.T) {
	src := `{"source_id":"s1","lineage_id":"L1","origin_type":"tool","origin_locator":"loc","snapshot_id":"snap","content_hash":"h","observed_at":"x","extractor_id":"ex","parent_source_id":"p"}`
	ev := func(id string) string {
		return `{"evidence_id":"` + id + `","polarity":"supports","content":"c","observed_at":"x","source":` + src + `}`
	}
	var d Decoder
	v, err := d.DecodeView([]byte(`{"proposition_id":"P","evidence":[` + ev("e1") + `,` + ev("e2") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := &v.Evidence[0].Source, &v.Evidence[1].Source
	if a.ExtractorID == b.ExtractorID || a.ParentSourceID == b.ParentSourceID {
		t.Fatal("two records share a pointer of their source")
	}
	*a.ExtractorID = "changed"
	if *b.ExtractorID != "ex" {
		t.Fatal("changing one record's source changed another's")
	}
}
