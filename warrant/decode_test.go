package warrant_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

const srcJSON = `{"source_id":"s1","lineage_id":"L1","origin_type":"tool","origin_locator":"loc","snapshot_id":"snap","content_hash":"sha256:x","observed_at":"2026-01-01T00:00:00Z"}`

// view builds a small valid view with the given extra top-level members.
func view(extra string) string {
	v := `{"proposition_id":"P","evaluated_at":"2026-06-01T00:00:00Z",` +
		`"evidence":[{"evidence_id":"e1","polarity":"supports","content":"c","observed_at":"2026-01-01T00:00:00Z","source":` + srcJSON + `}]`
	if extra != "" {
		v += "," + extra
	}
	return v + "}"
}

// Refusals name the field path and the rule, so an operator can fix the
// input without reading the spec.
func TestRefusalsNameFieldAndRule(t *testing.T) {
	cases := []struct {
		doc, field, rule string
	}{
		{`[]`, "", "must be a JSON object"},
		{`{"evaluated_at":"2026-01-01"}`, "proposition_id", "is required"},
		{`{"proposition_id":7}`, "proposition_id", "must be a string"},
		{view(`"checks":false`), "checks", "must be a list"},
		{view(`"checks":[1]`), "checks[0]", "must be an object"},
		{view(`"subjects":"abc"`), "subjects", "list of non-empty strings"},
		{view(`"subjects":["a",""]`), "subjects[1]", "non-empty string"},
		{view(`"freshness_policy_seconds":1.0`), "freshness_policy_seconds", "JSON integer"},
		{view(`"freshness_policy_seconds":true`), "freshness_policy_seconds", "JSON integer"},
		{view(`"freshness_policy_seconds":9007199254740992`), "freshness_policy_seconds", "2^53-1"},
		{view(`"degraded":"yes"`), "degraded", "boolean"},
		{view(`"retrieval_scope":1`), "retrieval_scope", "string"},
		{view(`"adapter_meta":[]`), "adapter_meta", "object"},
		{view(`"view_id":[1]`), "view_id", "string or an integer"},
		{view(`"lineage":[{"kind":"supersedes","from_id":"P","to_id":3}]`), "lineage[0].to_id", "non-empty string"},
		{view(`"lineage":[{"kind":"replaces","from_id":"P","to_id":"Q"}]`), "lineage[0].kind", "must be one of"},
		{view(`"conflicts":[{"conflict_id":"c","status":"open","proposition_ids":["Q"]}]`), "conflicts[0].proposition_ids", "must name"},
		{view(`"conflicts":[{"conflict_id":"c","status":"open","proposition_ids":[]}]`), "conflicts[0].proposition_ids", "at least one"},
		{view(`"conflicts":[{"conflict_id":"c","status":"closed","proposition_ids":["P"]}]`), "conflicts[0].status", "must be one of"},
		{view(`"assertions":[{"assertion_id":"a","text":"t","asserted_by":"x","assertion_confidence":"0.9","asserted_at":"2026-01-01","source":` + srcJSON + `}]`),
			"assertions[0].assertion_confidence", "finite number"},
		{view(`"assertions":[{"assertion_id":"a","text":"t","asserted_by":"x","assertion_confidence":1e400,"asserted_at":"2026-01-01","source":` + srcJSON + `}]`),
			"assertions[0].assertion_confidence", "finite number"},
		{view(`"assertions":[{"assertion_id":"a","text":"t","asserted_by":"x","assertion_confidence":0.5,"asserted_at":"2026-01-01","proposition_id":"Q","source":` + srcJSON + `}]`),
			"assertions[0].proposition_id", "variants"},
		{view(`"checks":[{"check_id":"k","method":"m","scope":"s","observed_at":null,"result":"supports","source":` + srcJSON + `}]`),
			"checks[0].observed_at", "is required"},
		{view(`"checks":[{"check_id":"k","method":"m","scope":"s","observed_at":"2026","result":"supports","source":{"source_id":"s1"}}]`),
			"checks[0].source.lineage_id", "is required"},
		{view(`"checks":[{"check_id":"k","method":"m","scope":"s","observed_at":"2026","result":"supports","source":` + strings.Replace(srcJSON, `"L1"`, `"L2"`, 1) + `}]`),
			"checks[0].source", "different SourceRef at evidence[0].source"},
		{strings.Replace(view(""), `}]}`, `},{"evidence_id":"e1","polarity":"opposes","content":"c","observed_at":"2026","source":`+srcJSON+`}]}`, 1),
			"evidence[1].evidence_id", "duplicate evidence id"},
		{`{"proposition_id":"P","evaluated_at":"2026", "x": NaN}`, "", "invalid JSON"},
	}
	for _, c := range cases {
		_, err := warrant.DecodeDocument([]byte(c.doc))
		var e *warrant.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: want a refusal, got %v", c.doc, err)
			continue
		}
		if e.Code != warrant.CodeInvalidView || e.Field != c.field || !strings.Contains(e.Rule, c.rule) {
			t.Errorf("%s:\n got %s | %s | %s\nwant %s | %s | …%s…", c.doc, e.Code, e.Field, e.Rule, warrant.CodeInvalidView, c.field, c.rule)
		}
	}
}

func TestUnknownPolicyAndBadEvaluatedAt(t *testing.T) {
	_, err := warrant.DecodeDocument([]byte(view(`"policy_id":"reference-v3"`)))
	var e *warrant.Error
	if !errors.As(err, &e) || e.Code != warrant.CodeUnknownPolicy {
		t.Errorf("unknown policy: got %v", err)
	}
	doc, err := warrant.DecodeDocument([]byte(strings.Replace(view(""), "2026-06-01T00:00:00Z", "yesterday", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := warrant.Evaluate(doc.View, doc.EvaluatedAt); !errors.As(err, &e) || e.Field != "evaluated_at" {
		t.Errorf("bad evaluated_at: got %v", err)
	}
}

// Scalar normalisation: non-string ids read as Python's str() of the value.
func TestScalarNormalisation(t *testing.T) {
	doc := `{"proposition_id":"P","evaluated_at":"2026-06-01T00:00:00Z","view_id":42,` +
		`"assertions":[{"assertion_id":7,"text":["x"],"asserted_by":true,"assertion_confidence":1,"asserted_at":20260101,"source":` + srcJSON + `}],` +
		`"conflicts":[{"conflict_id":1.0,"status":"resolved","proposition_ids":["P:sub"],"note":0}]}`
	d, err := warrant.DecodeDocument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	a := d.View.Assertions[0]
	got := []string{d.View.ViewID, a.AssertionID, a.Text, a.AssertedBy, a.AssertedAt, d.View.Conflicts[0].ConflictID, d.View.Conflicts[0].Note}
	want := []string{"42", "7", "['x']", "True", "20260101", "1.0", ""}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("field %d: got %q, want %q", i, got[i], want[i])
		}
	}
	w, err := warrant.Evaluate(d.View, d.EvaluatedAt)
	if err != nil {
		t.Fatal(err)
	}
	// asserted_at 20260101 is a basic-format date, so the assertion is available.
	if w.Warrant.Acceptance != warrant.Tentative || w.Warrant.Conflict != warrant.ConflictResolved {
		t.Errorf("got %+v", w.Warrant)
	}
}

func FuzzDecodeEvaluate(f *testing.F) {
	f.Add([]byte(view("")), "2026-06-01T00:00:00Z")
	f.Add([]byte(view(`"checks":[{"check_id":"k","method":"tool_observation","scope":"s","observed_at":"2026-05-01","result":"supports","subjects":["a"],"source":`+srcJSON+`}],"subjects":["A"]`)), "2026-W20")
	f.Add([]byte(`{"proposition_id":"P","lineage":[{"kind":"superseded_by","from_id":"P:1","to_id":"Q"}]}`), "20260101T10")
	f.Fuzz(func(t *testing.T, data []byte, at string) {
		v, err := warrant.DecodeView(data)
		if err != nil {
			return
		}
		w, err := warrant.Evaluate(v, at)
		if err != nil {
			return
		}
		// Whatever was accepted must survive the store's round trip with
		// the same warrant.
		back, err := warrant.DecodeView(warrant.Encode(v))
		if err != nil {
			t.Fatalf("stored form of an accepted view refused: %v", err)
		}
		w2, _ := warrant.Evaluate(back, at)
		if axes(w) != axes(w2) {
			t.Fatalf("round trip changed the axes: %v -> %v", axes(w), axes(w2))
		}
	})
}

// The embedded policy file holds exactly the vocabularies of EWP §4; an
// accidental edit of policy.json shows up here before it changes a warrant.
func TestPolicyFileVocabularies(t *testing.T) {
	for method, want := range map[string]string{
		"human_attestation": warrant.VerHuman, "human_review": warrant.VerHuman,
		"tool_observation": warrant.VerExternal, "external_clock": warrant.VerExternal,
		"document_quote": warrant.VerExternal, "independent_reproduction": warrant.VerExternal,
		"vendor_documentation": warrant.VerExternal, "winrm": warrant.VerExternal, "external_api": warrant.VerExternal,
		"inference": warrant.VerIndirect, "extract": warrant.VerIndirect, "derived": warrant.VerIndirect,
		"model_introspection": warrant.VerIndirect, "Tool_Observation": warrant.VerNone, "guess": warrant.VerNone,
	} {
		doc := view(`"checks":[{"check_id":"k","method":"` + method + `","scope":"s","observed_at":"2026-05-01T00:00:00Z","result":"supports","source":` + srcJSON + `}]`)
		_, w := evalDoc(t, []byte(doc))
		if w.Warrant.Verification != want {
			t.Errorf("method %s with a trusted origin: got %s, want %s", method, w.Warrant.Verification, want)
		}
	}
	for origin, trusted := range map[string]bool{"tool": true, "document": true, "human": true, "api": true,
		"vendor": true, "sensor": true, "extract": false, "turn": false, "episode": false, "inline:tool": false, "Tool": false} {
		if warrant.TrustedOrigin(origin) != trusted {
			t.Errorf("TrustedOrigin(%q) = %v", origin, !trusted)
		}
	}
}

// json.loads keeps a lone surrogate, and fromisoformat accepts any single
// character between date and time, so this asserted_at is 12:00 on the
// day (CPython 3.11 accepts "2026-09-21\ud80012:00").
func TestLoneSurrogateSeparator(t *testing.T) {
	doc := `{"proposition_id":"P","evaluated_at":"2026-09-21T11:00:00Z","assertions":[{"assertion_id":"a","text":"t",` +
		`"asserted_by":"x","assertion_confidence":0.5,"asserted_at":"2026-09-21\ud80012:00","source":` + srcJSON + `}]}`
	_, w := evalDoc(t, []byte(doc))
	if w.Warrant.Acceptance != warrant.Unaccepted {
		t.Errorf("an assertion at 12:00 is not available at 11:00: got %s", w.Warrant.Acceptance)
	}
	later := strings.Replace(doc, "T11:00", "T13:00", 1)
	if _, w := evalDoc(t, []byte(later)); w.Warrant.Acceptance != warrant.Tentative {
		t.Errorf("available at 13:00: got %s", w.Warrant.Acceptance)
	}
}

// evaluated_at is never str()-normalised: the reference refuses every
// non-string, and str(20260901) would be a basic-format date evaluated as
// one. Both decoders must refuse, the fast one by giving up.
func TestNonStringEvaluatedAtRefused(t *testing.T) {
	for _, raw := range []string{`20260901`, `2026.5`, `true`, `false`, `["2026-06-01"]`, `{}`, `{"t":"2026-06-01"}`} {
		doc := strings.Replace(view(""), `"2026-06-01T00:00:00Z"`, raw, 1)
		for name, decode := range map[string]func([]byte) (*warrant.Document, error){
			"DecodeDocument": warrant.DecodeDocument,
			"Decoder":        new(warrant.Decoder).DecodeDocument,
		} {
			d, err := decode([]byte(doc))
			var e *warrant.Error
			if !errors.As(err, &e) {
				t.Errorf("%s: evaluated_at %s: want a refusal, got document with evaluated_at %q", name, raw, d.EvaluatedAt)
				continue
			}
			if e.Code != warrant.CodeInvalidView || e.Field != "evaluated_at" || !strings.Contains(e.Rule, "must be a string") {
				t.Errorf("%s: evaluated_at %s: got %v", name, raw, err)
			}
		}
	}
	// Absent and null stay "not given"; the caller decides what that means.
	for _, doc := range []string{`{"proposition_id":"P"}`, `{"proposition_id":"P","evaluated_at":null}`} {
		d, err := warrant.DecodeDocument([]byte(doc))
		if err != nil || d.EvaluatedAt != "" {
			t.Errorf("%s: got %+v, %v; want evaluated_at \"\"", doc, d, err)
		}
	}
}
