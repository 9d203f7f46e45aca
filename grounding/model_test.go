package grounding

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The right-hand sides were produced by CPython's
// unicodedata.normalize("NFC", s).casefold(), the reference of spec §1.7.
func TestFoldMatchesPythonCasefoldNFC(t *testing.T) {
	cases := map[string]string{
		"Straße":           "strasse",
		"STRASSE":          "strasse",
		"CAFE\u0301":       "caf\u00e9", // decomposed é composes first
		"caf\u00e9":        "caf\u00e9",
		"\u0130":           "i\u0307",
		"\u03c2":           "\u03c3",
		"\ufb01":           "fi",
		"\u01c5":           "\u01c6",
		"\u1fbc":           "\u03b1\u03b9",
		"\u212a":           "k",
		"\u0149":           "\u02bcn",
		"\u0390":           "\u03b9\u0308\u0301", // folding does not re-normalize
		"Operating_System": "operating_system",
		"":                 "",
	}
	for in, want := range cases {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%+q) = %+q, want %+q", in, got, want)
		}
	}
}

func TestDepthLevelDecodeRejectsOutOfRange(t *testing.T) {
	for _, ok := range []string{"0", "4", " 2 "} {
		var l DepthLevel
		if err := json.Unmarshal([]byte(ok), &l); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"5", "-1", "1.5", `"1"`, "null", "true"} {
		var l DepthLevel
		if err := json.Unmarshal([]byte(bad), &l); err == nil {
			t.Errorf("%s decoded to %d, want an error", bad, l)
		}
	}
	if got := Constraints.String(); got != "D3 CONSTRAINTS" {
		t.Errorf("label = %q", got)
	}
}

func TestEnumsDecodeStrictly(t *testing.T) {
	var rt RelationType
	if err := json.Unmarshal([]byte(`"REQUIRES"`), &rt); err != nil || !rt.Transitive() {
		t.Errorf("REQUIRES: %v transitive=%v", err, rt.Transitive())
	}
	if err := json.Unmarshal([]byte(`"CAUSES"`), &rt); err == nil {
		t.Error("unknown relation type accepted")
	}
	for typ, trans := range map[RelationType]bool{AppliesTo: false, Includes: false, Requires: true, ConstrainedBy: true, DependsOn: true} {
		if typ.Transitive() != trans {
			t.Errorf("%s transitive = %v", typ, !trans)
		}
	}
	var ps ProvenanceSource
	if err := json.Unmarshal([]byte(`"conversational"`), &ps); err == nil {
		t.Error("removed provenance source accepted")
	}
}

func TestContiguousMaxAndMissingLevels(t *testing.T) {
	mask := func(ls ...int) uint8 {
		var m uint8
		for _, l := range ls {
			m |= 1 << l
		}
		return m
	}
	for _, c := range []struct {
		levels []int
		want   int
	}{{[]int{0, 1, 3}, 1}, {[]int{1, 2, 3}, -1}, {[]int{0}, 0}, {nil, -1}, {[]int{0, 1, 2, 3, 4}, 4}} {
		if got := contiguousMax(mask(c.levels...)); got != c.want {
			t.Errorf("cmax(%v) = %d, want %d", c.levels, got, c.want)
		}
	}
	// Dormant D4 over a D1 chain is excluded; holes below required are kept.
	if got := missingLevels(mask(0, 1, 4), 1, 4); !slices.Equal(got, []DepthLevel{2, 3}) {
		t.Errorf("missing = %v", got)
	}
	if got := missingLevels(mask(0, 1, 3), 1, 3); !slices.Equal(got, []DepthLevel{2}) {
		t.Errorf("missing = %v", got)
	}
	if got := missingLevels(mask(1), -1, 0); !slices.Equal(got, []DepthLevel{0}) {
		t.Errorf("missing with none = %v", got)
	}
}

func TestVacuousDepthDoesNotGround(t *testing.T) {
	p := Primitive{Depths: []Depth{{Level: 0}, {Level: 1}, {Level: 2, Properties: JSONObject{"a": 1}}}}
	if c := p.ContiguousMax(); c == nil || *c != Existence {
		t.Fatalf("cmax = %v, want D0 (empty D1 is vacuous)", c)
	}
	p.Depths[1].Relata = []Relatum{{RelationType: AppliesTo}}
	if c := p.ContiguousMax(); c == nil || *c != Capabilities {
		t.Fatalf("cmax = %v, want D2 (a relatum makes D1 count)", c)
	}
}

const storedRevision = `{"id":"532e34b8-1683-5fbc-9025-ccb0079b6a6b","name":"File","depths":[` +
	`{"level":0,"properties":{},"relata":[],"provenance":{"source":"authored","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z"}},` +
	`{"level":1,"properties":{"big":12345678901234567890,"list":["a",1.5,{"x":null}],"s":"é"},"relata":[` +
	`{"relation_type":"REQUIRES","target_id":"20a34f6e-9525-5b2c-9ba3-6e0aa4c34a15","target_depth":1,"metadata":{"why":"paths"},` +
	`"provenance":{"source":"learned","created_at":"2026-01-02T03:04:05.123456789Z","updated_at":"2026-01-03T00:00:00Z","detail":"approved"}}],` +
	`"provenance":{"source":"authored","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z"}}],` +
	`"provenance":{"source":"authored","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z"}}`

func TestPrimitiveJSONRoundTripIsLossless(t *testing.T) {
	var p Primitive
	if err := json.Unmarshal([]byte(storedRevision), &p); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, []byte(storedRevision)) {
		t.Fatalf("round trip changed the payload:\n got %s\nwant %s", out, storedRevision)
	}
}

func TestPrimitiveJSONCanonicalEmpties(t *testing.T) {
	p := Primitive{ID: "532e34b8-1683-5fbc-9025-ccb0079b6a6b", Name: "x", Depths: []Depth{{Level: 0}}}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"properties":{}`, `"relata":[]`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("%s lacks %s", out, want)
		}
	}
	var bad Primitive
	if err := json.Unmarshal([]byte(strings.Replace(storedRevision, `"level":1`, `"level":5`, 1)), &bad); err == nil {
		t.Error("stored level 5 decoded without error")
	}
}
