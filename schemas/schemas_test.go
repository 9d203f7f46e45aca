package schemas

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/warrant"
)

const baseView = `{
  "proposition_id": "P", "view_id": "v1", "subjects": ["db-1"], "omitted_sources": ["s9"],
  "retrieval_scope": "complete", "degraded": false, "freshness_policy_seconds": 3600, "adapter_meta": {"a": 1},
  "assertions": [{"assertion_id": "a1", "text": "X", "asserted_by": "agent", "assertion_confidence": 0.9,
    "asserted_at": "2026-09-01T00:00:00Z", "proposition_id": "P",
    "source": {"source_id": "s1", "lineage_id": "L1", "origin_type": "document", "origin_locator": "loc:s1",
      "snapshot_id": "snap:s1", "content_hash": "sha256:s1", "observed_at": "2026-09-01T00:00:00Z",
      "extractor_id": null, "parent_source_id": null}}],
  "evidence": [{"evidence_id": "e1", "polarity": "supports", "content": "X", "observed_at": "2026-09-01T00:00:00Z",
    "source": {"source_id": "s2", "lineage_id": "L2", "origin_type": "extract", "origin_locator": "loc:s2",
      "snapshot_id": "snap:s2", "content_hash": "sha256:s2", "observed_at": "2026-09-01T00:00:00Z"}}],
  "checks": [{"check_id": "k1", "method": "tool_observation", "scope": "s", "result": "supports",
    "observed_at": "2026-09-02T00:00:00Z", "subjects": ["db-1"],
    "source": {"source_id": "s3", "lineage_id": "L3", "origin_type": "tool", "origin_locator": "loc:s3",
      "snapshot_id": "snap:s3", "content_hash": "sha256:s3", "observed_at": "2026-09-02T00:00:00Z"}}],
  "conflicts": [{"conflict_id": "c1", "status": "open", "proposition_ids": ["P", "Q"], "note": "n"}],
  "lineage": [{"kind": "derived_from", "from_id": "s2", "to_id": "s1"}]
}`

// awkward are the values the mutation test puts in every field; "absent"
// removes the field.
var awkward = []string{
	"absent", `null`, `0`, `-1`, `1.0`, `1e3`, `1e400`, `9007199254740991`, `9007199254740992`,
	`true`, `false`, `""`, `"x"`, `"supports"`, `"open"`, `"derived_from"`, `"P"`, `"reference-v2"`,
	`[]`, `["a"]`, `[""]`, `[1]`, `["P"]`, `{}`, `{"a": 1}`,
}

// fieldPaths are the members the mutation test replaces.
var fieldPaths = []string{
	"proposition_id", "view_id", "subjects", "omitted_sources", "retrieval_scope", "degraded",
	"freshness_policy_seconds", "adapter_meta", "assertions", "evidence", "checks", "conflicts", "lineage",
	"policy_id", "policy_version",
	"assertions.0.assertion_id", "assertions.0.text", "assertions.0.asserted_by",
	"assertions.0.assertion_confidence", "assertions.0.asserted_at", "assertions.0.proposition_id", "assertions.0.source",
	"assertions.0.source.source_id", "assertions.0.source.observed_at", "assertions.0.source.extractor_id",
	"evidence.0.evidence_id", "evidence.0.polarity", "evidence.0.content", "evidence.0.observed_at", "evidence.0.source",
	"checks.0.check_id", "checks.0.method", "checks.0.result", "checks.0.subjects", "checks.0.observed_at",
	"conflicts.0.conflict_id", "conflicts.0.status", "conflicts.0.proposition_ids", "conflicts.0.note",
	"lineage.0.kind", "lineage.0.from_id", "lineage.0.to_id",
}

// TestMutationsAgreeWithKernel replaces every field with every awkward
// value and holds the schema to the kernel in both directions: whatever
// the kernel accepts validates, and whatever it refuses for a rule a
// schema can state does not.
func TestMutationsAgreeWithKernel(t *testing.T) {
	var n, accepted int
	for _, path := range fieldPaths {
		for _, val := range awkward {
			raw := mutate(t, path, val)
			n++
			kerr := kernelRefuses(raw)
			doc, err := Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			serr := ValidateDocument(doc)
			switch {
			case kerr == nil && serr != nil:
				t.Errorf("%s = %s: the kernel accepts, the schema refuses: %v", path, val, serr)
			case kerr == nil:
				accepted++
			case serr == nil && !beyond(kerr):
				t.Errorf("%s = %s: the kernel refuses (%v), the schema accepts", path, val, kerr)
			}
		}
	}
	t.Logf("%d mutations, %d accepted by the kernel", n, accepted)
}

// mutate sets path (dotted, numbers index lists) in baseView to the JSON
// value val, or removes it.
func mutate(t *testing.T, path, val string) []byte {
	t.Helper()
	var root any
	if err := json.Unmarshal([]byte(baseView), &root); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(path, ".")
	cur := root
	for _, p := range parts[:len(parts)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[p]
		case []any:
			cur = c[0]
		}
	}
	obj := cur.(map[string]any)
	last := parts[len(parts)-1]
	if val == "absent" {
		delete(obj, last)
	} else {
		obj[last] = json.RawMessage(val)
	}
	out, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestProblemsCarryPointers(t *testing.T) {
	raw := mutate(t, "checks.0.result", `"maybe"`)
	doc, _ := Decode(raw)
	doc.(map[string]any)["evidence"].([]any)[0].(map[string]any)["source"] = map[string]any{"source_id": "s2"}
	doc.(map[string]any)["subjects"] = "db-1"
	err := ValidateView(doc)
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("got %v", err)
	}
	want := []string{
		"/checks/0/result: must be one of supports, opposes, inconclusive; got \"maybe\"",
		"/evidence/0/source/content_hash: is required (present and not null)",
		"/evidence/0/source/lineage_id: is required (present and not null)",
	}
	var got []string
	for _, p := range se.Problems {
		got = append(got, p.String())
	}
	for _, w := range want {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("missing %q in\n%s", w, strings.Join(got, "\n"))
		}
	}
	if last := got[len(got)-1]; last != "/subjects: must be a list, not a string" {
		t.Errorf("problems are not in document order: last is %q", last)
	}
	if !strings.HasPrefix(se.Error(), "evidence-view schema: /checks/0/result: ") || !strings.Contains(se.Error(), "more)") {
		t.Errorf("Error() = %q", se.Error())
	}
}

func TestPointerEscapesTokens(t *testing.T) {
	if got := Pointer([]string{"a/b", "m~n", "0"}); got != "/a~1b/m~0n/0" {
		t.Errorf("got %q", got)
	}
	doc, _ := Decode([]byte(`{"proposition_id": "P", "checks": [{}]}`))
	var se *Error
	if !errors.As(ValidateView(doc), &se) || se.Problems[0].Pointer != "/checks/0/check_id" {
		t.Fatalf("got %v", se)
	}
}

// The bounds on assertion_confidence are where Python's float() stops
// being finite. The kernel and the schema must agree on both sides.
func TestConfidenceBoundaryMatchesKernel(t *testing.T) {
	const mid = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792"
	below := mid[:len(mid)-1] + "1" // mid ends in 2: mid - 1
	cases := map[string]bool{
		below: true, mid: false, "-" + below: true, "-" + mid: false,
		"1.7976931348623157e308": true, "1.7976931348623159e308": false,
		"1e-500": true, "0e99999999999999999999": true, "1e4000000": false, "-1e99999999999999999999": false,
	}
	for lit, finite := range cases {
		raw := mutate(t, "assertions.0.assertion_confidence", lit)
		if got := kernelRefuses(raw) == nil; got != finite {
			t.Fatalf("%.30s: the kernel says finite=%v; the test expects %v", lit, got, finite)
		}
		doc, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := ValidateView(doc) == nil; got != finite {
			t.Errorf("%.30s: schema says valid=%v, the kernel finite=%v", lit, got, finite)
		}
	}
}

// Hostile numbers must neither hang nor crash the validator.
func TestHostileNumbersAreCheap(t *testing.T) {
	huge := "1" + strings.Repeat("0", 200000)
	long := "0." + strings.Repeat("3", 200000)
	fields := []string{"freshness_policy_seconds", "view_id", "assertions.0.assertion_confidence", "assertions.0.text"}
	for _, f := range fields {
		for _, lit := range []string{"1e4999999", "1e-4999999", "1e99999999999999999999", huge, long, "-" + huge} {
			raw := mutate(t, f, lit)
			doc, err := Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			serr := ValidateView(doc)
			// A hang or a super-linear parse takes seconds to minutes; the
			// bound leaves room for a machine shared with other work.
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("%s = %.20s...: validation took %v", f, lit, d)
			}
			if kernelRefuses(raw) == nil && serr != nil {
				t.Errorf("%s = %.20s...: the kernel accepts, the schema refuses: %v", f, lit, serr)
			}
		}
	}
}

func TestTameKeepsOrdinaryNumbers(t *testing.T) {
	for lit, want := range map[string]string{
		"0.9": "0.9", "12": "12", "1e308": "1e308", "-2.5E-7": "-2.5E-7",
		"1e401": "1e400", "-15e400": "-1e400", "0.0001e-397": "1e-400", "0e999": "0", "-0.0": "0",
		"123e-2": "123e-2", "0.00e-99999999999999999999": "0",
	} {
		if got := string(tameNumber(json.Number(lit))); got != want {
			t.Errorf("tameNumber(%s) = %s, want %s", lit, got, want)
		}
	}
}

func TestSchemasAreEmbedded(t *testing.T) {
	for _, n := range []string{View, Document, Ingest} {
		raw, err := FS.ReadFile(n + ".schema.json")
		if err != nil || !json.Valid(raw) {
			t.Errorf("%s: %v", n, err)
		}
	}
	if err := Validate("nope", map[string]any{}); err == nil {
		t.Error("an unknown schema name validated")
	}
	var we *warrant.Error
	if errors.As(ValidateView(map[string]any{}), &we) {
		t.Error("schema errors must not pose as kernel refusals")
	}
}
