package warrant

import (
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

const limSource = `{"source_id":"s1","lineage_id":"L1","origin_type":"tool","origin_locator":"loc","snapshot_id":"snap","content_hash":"sha256:x","observed_at":"2026-01-01T00:00:00Z"}`

// limView is a valid view in the usual shape (the fast path takes it)
// with the given members added.
func limView(extra string) string {
	v := `{"proposition_id":"P","evaluated_at":"2026-06-01T00:00:00Z",` +
		`"evidence":[{"evidence_id":"e1","polarity":"supports","content":"c","observed_at":"2026-01-01T00:00:00Z","source":` + limSource + `}]`
	if extra != "" {
		v += "," + extra
	}
	return v + "}"
}

func limCheck(id string) string {
	return `{"check_id":"` + id + `","method":"m","scope":"s","observed_at":"2026","result":"supports","source":` + limSource + `}`
}

func quoted(n int, s string) string {
	q := make([]string, n)
	for i := range q {
		q[i] = `"` + s + itoa(int64(i)) + `"`
	}
	return strings.Join(q, ",")
}

// limitCases hold views one over a limit: the limit, the view, and the
// field the refusal names. at is the value of the limit that just admits
// the view.
var limitCases = []struct {
	name  string
	lim   func(n int) Limits
	at    int
	doc   string
	field string
	rule  string
}{
	{"records", func(n int) Limits { return Limits{MaxRecords: n} }, 3,
		limView(`"checks":[` + limCheck("k1") + `],"lineage":[{"kind":"derived_from","from_id":"P","to_id":"Q"}]`),
		"", "the view has 3 records (assertions, evidence, checks, conflicts and lineage edges together); the limit is 2 (MaxRecords)"},
	{"view subjects", func(n int) Limits { return Limits{MaxSubjects: n} }, 12,
		limView(`"subjects":[` + quoted(12, "s") + `]`), "subjects", "has 12 entries; the limit is 11 (MaxSubjects)"},
	{"omitted_sources", func(n int) Limits { return Limits{MaxSubjects: n} }, 3,
		limView(`"omitted_sources":[` + quoted(3, "o") + `]`), "omitted_sources", "has 3 entries"},
	{"check subjects", func(n int) Limits { return Limits{MaxSubjects: n} }, 4,
		limView(`"checks":[` + limCheck("k0") + `,` + strings.Replace(limCheck("k1"), `"result"`, `"subjects":[`+quoted(4, "h")+`],"result"`, 1) + `]`),
		"checks[1].subjects", "has 4 entries; the limit is 3 (MaxSubjects)"},
	{"conflict proposition_ids", func(n int) Limits { return Limits{MaxSubjects: n} }, 3,
		limView(`"conflicts":[{"conflict_id":"c","status":"open","proposition_ids":["P","P:a","P:b"]}]`),
		"conflicts[0].proposition_ids", "has 3 entries"},
	{"proposition_id", func(n int) Limits { return Limits{MaxStringBytes: n} }, 40,
		strings.Replace(limView(""), `"P"`, `"P`+strings.Repeat("x", 39)+`"`, 1), "proposition_id", "is 40 bytes long; the limit is 39 (MaxStringBytes)"},
	{"evidence content", func(n int) Limits { return Limits{MaxStringBytes: n} }, 30,
		strings.Replace(limView(""), `"content":"c"`, `"content":"`+strings.Repeat("c", 30)+`"`, 1), "evidence[0].content", "is 30 bytes long"},
	{"source field", func(n int) Limits { return Limits{MaxStringBytes: n} }, 31,
		strings.Replace(limView(""), `"loc"`, `"`+strings.Repeat("l", 31)+`"`, 1), "evidence[0].source.origin_locator", "is 31 bytes long"},
	{"escaped string", func(n int) Limits { return Limits{MaxStringBytes: n} }, 32,
		strings.Replace(limView(""), `"content":"c"`, `"content":"`+strings.Repeat(`\u00e9`, 16)+`"`, 1), "evidence[0].content", "is 32 bytes long"},
	{"check subject", func(n int) Limits { return Limits{MaxStringBytes: n} }, 33,
		limView(`"checks":[` + strings.Replace(limCheck("k1"), `"result"`, `"subjects":["a","`+strings.Repeat("h", 33)+`"],"result"`, 1) + `]`),
		"checks[0].subjects[1]", "is 33 bytes long"},
	{"lineage endpoint", func(n int) Limits { return Limits{MaxStringBytes: n} }, 34,
		limView(`"lineage":[{"kind":"derived_from","from_id":"P","to_id":"` + strings.Repeat("q", 34) + `"}]`), "lineage[0].to_id", "is 34 bytes long"},
	{"adapter_meta string", func(n int) Limits { return Limits{MaxStringBytes: n} }, 35,
		limView(`"adapter_meta":{"k":["x","` + strings.Repeat("m", 35) + `"]}`), "adapter_meta.k[1]", "is 35 bytes long"},
	{"evaluated_at", func(n int) Limits { return Limits{MaxStringBytes: n} }, 35,
		strings.Replace(limView(""), `"2026-06-01T00:00:00Z"`, `"2026-06-01T00:00:00Z`+strings.Repeat(" ", 15)+`"`, 1), "evaluated_at", "is 35 bytes long"},
}

// Each limit refuses a view one over it, naming the field and the limit,
// and admits the same view at the limit. Every view is in the usual
// shape, so the fast path is shown to give up rather than accept.
func TestLimitsRefuseOverAndAdmitAt(t *testing.T) {
	for _, c := range limitCases {
		t.Run(c.name, func(t *testing.T) {
			if !fastAgrees(t, c.doc) {
				t.Fatalf("the fast path does not take the view, so the test would not exercise it:\n%s", c.doc)
			}
			at := c.at
			d := Decoder{Limits: c.lim(at - 1)}
			_, err := d.DecodeDocument([]byte(c.doc))
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeLimitExceeded || e.Field != c.field || !strings.Contains(e.Rule, c.rule) {
				t.Fatalf("over the limit: got %v\nwant %s | %s | …%s…", err, CodeLimitExceeded, c.field, c.rule)
			}
			if c.name != "evaluated_at" {
				if _, err := d.DecodeView([]byte(c.doc)); !errors.As(err, &e) || e.Code != CodeLimitExceeded || e.Field != c.field {
					t.Errorf("DecodeView over the limit: got %v", err)
				}
			}
			d.Limits = c.lim(at)
			got, err := d.DecodeDocument([]byte(c.doc))
			if err != nil {
				t.Fatalf("at the limit: refused: %v", err)
			}
			want, _ := DecodeDocument([]byte(c.doc))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("at the limit: decoded differently from the default decoder")
			}
		})
	}
}

// A str()-normalised text can be longer than any string of the JSON; the
// limit holds for the text the view keeps.
func TestStringLimitAfterStr(t *testing.T) {
	doc := strings.Replace(limView(""), `"content":"c"`, `"content":[1,2,3,4,5,6,7,8,9,10]`, 1)
	d := Decoder{Limits: Limits{MaxStringBytes: 31}}
	v, err := d.DecodeView([]byte(doc))
	if err != nil || v.Evidence[0].Content != "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]" {
		t.Fatalf("got %v, %v", v, err)
	}
	d.Limits.MaxStringBytes = 30
	var e *Error
	if _, err := d.DecodeView([]byte(doc)); !errors.As(err, &e) || e.Code != CodeLimitExceeded || e.Field != "evidence[0].content" {
		t.Fatalf("got %v, want the str() text refused", err)
	}
}

// The size of the text is checked before anything reads it: an
// oversized text is refused as oversized even when it is not JSON, and
// costs no copy or parse.
func TestViewBytesCheckedFirst(t *testing.T) {
	d := Decoder{Limits: Limits{MaxViewBytes: 10}}
	for _, doc := range []string{`{"proposition_id": "P"}`, `not JSON at all`, strings.Repeat("[", 100)} {
		_, err := d.DecodeDocument([]byte(doc))
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeLimitExceeded || e.Field != "" ||
			e.Rule != "the view is "+itoa(int64(len(doc)))+" bytes of JSON text; the limit is 10 (MaxViewBytes)" {
			t.Errorf("%s: got %v", doc, err)
		}
	}
	big := []byte(limView(`"adapter_meta":{"k":"` + strings.Repeat("m", DefaultLimits.MaxViewBytes) + `"}`))
	var dec Decoder
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 5 {
		if _, err := dec.DecodeView(big); err == nil {
			t.Fatal("a view over the default MaxViewBytes was accepted")
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("refusing a %d-byte view 5 times allocated %d bytes; it must not copy or parse the text", len(big), n)
	}
	d.Limits.MaxViewBytes = len(`{"proposition_id":"P"}`)
	if _, err := d.DecodeView([]byte(`{"proposition_id":"P"}`)); err != nil {
		t.Errorf("a view exactly at MaxViewBytes: %v", err)
	}
}

// Zero is the default, negative is no limit.
func TestLimitsZeroAndNegative(t *testing.T) {
	if got := (Limits{}).withDefaults(); got != DefaultLimits {
		t.Errorf("zero Limits = %+v, want DefaultLimits %+v", got, DefaultLimits)
	}
	if got := (Limits{MaxRecords: -1, MaxSubjects: 7}).withDefaults(); got.MaxRecords != -1 || got.MaxSubjects != 7 || got.MaxViewBytes != DefaultLimits.MaxViewBytes {
		t.Errorf("withDefaults changed a set field: %+v", got)
	}
	doc := limView(`"subjects":[` + quoted(DefaultLimits.MaxSubjects+1, "s") + `]`)
	var e *Error
	if _, err := DecodeView([]byte(doc)); !errors.As(err, &e) || e.Code != CodeLimitExceeded || e.Field != "subjects" {
		t.Errorf("default MaxSubjects: got %v", err)
	}
	d := Decoder{Limits: Limits{MaxSubjects: -1}}
	if v, err := d.DecodeView([]byte(doc)); err != nil || len(v.Subjects) != DefaultLimits.MaxSubjects+1 {
		t.Errorf("MaxSubjects -1: got %v", err)
	}
}

// Deep nesting is refused at a bounded depth by both decoders, wherever
// it is, without exhausting the stack or taking long.
func TestDeepNestingRefused(t *testing.T) {
	deep := strings.Repeat("[", 1_000_000)
	for _, doc := range []string{
		deep,
		`{"proposition_id":"P","adapter_meta":{"k":` + deep + `}}`,
		`{"proposition_id":"P","unknown":` + deep + `}`,
		`{"proposition_id":"P","assertions":[{"text":` + deep + `}]}`,
		`{"proposition_id":"P","adapter_meta":` + strings.Repeat(`{"a":`, 200_000) + `1` + strings.Repeat(`}`, 200_000) + `}`,
	} {
		_, err := DecodeView([]byte(doc))
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidView || !strings.Contains(e.Rule, "nesting too deep") {
			t.Errorf("%.60s…: got %v", doc, err)
		}
	}
	// Nesting the reference reads is read.
	ok := `{"proposition_id":"P","adapter_meta":{"k":` + strings.Repeat("[", 800) + strings.Repeat("]", 800) + `}}`
	if _, err := DecodeView([]byte(ok)); err != nil {
		t.Errorf("800 levels: %v", err)
	}
}

// FuzzLimits: a decoder with small limits gives the unlimited decoder's
// answer, or refuses with CodeLimitExceeded; what it accepts is within
// its limits.
func FuzzLimits(f *testing.F) {
	for _, c := range limitCases {
		f.Add([]byte(c.doc), uint16(c.at-1), uint16(c.at-1), uint16(c.at-1), uint16(4000))
	}
	f.Add([]byte(limView(`"adapter_meta":{"a":{"b":["`+strings.Repeat("z", 50)+`"]}}`)), uint16(3), uint16(3), uint16(40), uint16(0))
	f.Add([]byte(`{"proposition_id":"P","adapter_meta":`+strings.Repeat("[", 1000)+`}`), uint16(1), uint16(1), uint16(1), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, records, subjects, str, size uint16) {
		lim := Limits{MaxRecords: int(records), MaxSubjects: int(subjects), MaxStringBytes: int(str), MaxViewBytes: int(size)}
		d := Decoder{Limits: lim}
		got, err := d.DecodeDocument(data)
		free := Decoder{Limits: Limits{-1, -1, -1, -1}}
		want, ferr := free.DecodeDocument(data)
		var e *Error
		switch {
		case errors.As(err, &e) && e.Code == CodeLimitExceeded:
			return
		case err != nil:
			if ferr == nil || ferr.Error() != err.Error() {
				t.Fatalf("limited decoder refused %v; unlimited: %v", err, ferr)
			}
			return
		case ferr != nil || !reflect.DeepEqual(got, want):
			t.Fatalf("limited decoder accepted what the unlimited one decodes as %v, %v", want, ferr)
		}
		lim = lim.withDefaults()
		v := got.View
		n := len(v.Assertions) + len(v.Evidence) + len(v.Checks) + len(v.Conflicts) + len(v.Lineage)
		if exceeds(len(data), lim.MaxViewBytes) || exceeds(n, lim.MaxRecords) ||
			lim.checkStrings(v) != nil || lim.checkEvaluatedAt(got.EvaluatedAt) != nil ||
			exceeds(len(v.Subjects), lim.MaxSubjects) || exceeds(len(v.OmittedSources), lim.MaxSubjects) {
			t.Fatalf("accepted a view over %+v", lim)
		}
	})
}
