package mcp

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// encodeWarrant must write exactly what encoding/json writes for the same
// warrantResult: clients and goldens compare bytes, and the output schema
// was written against encoding/json's output.
func TestEncodeWarrantMatchesEncodingJSON(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "fixtures", "pack", "fixtures", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no pack fixtures: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			EvaluatedAt string `json:"evaluated_at"`
		}
		if err := json.Unmarshal(raw, &meta); err != nil || meta.EvaluatedAt == "" {
			t.Fatalf("%s: no evaluated_at: %v", f, err)
		}
		v, err := warrant.DecodeView(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		w, err := warrant.Evaluate(v, meta.EvaluatedAt)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		sameAsEncodingJSON(t, filepath.Base(f), warrantResult{WarrantView: filled(w)})
		demoted := demote(v)
		sameAsEncodingJSON(t, filepath.Base(f)+" (inline)", warrantResult{WarrantView: filled(w), InlineOriginsDemoted: &demoted})
	}
}

// Strings and numbers encoding/json treats specially.
func TestEncodeWarrantEdgeValues(t *testing.T) {
	odd := []string{"", "plain", `quote " and \ backslash`, "<script>&amp;</script>", "tab\tnew\nline\rcr\bbs\fff",
		"\x00\x01\x1f\x7f", "é ü 日本 🙂", "bad \xff\xfe utf8", "truncated \xe2\x82", "line\u2028para\u2029end",
		"\u2027\u202a", "ends with \\"}
	floats := []float64{0, math.Copysign(0, -1), 0.1, 0.45, 1, -1.5, 1e-6, 9.99e-7, 1e-7, 1.5e-300,
		1e20, 1e21, 123456789012345678901234567890, math.MaxFloat64, math.SmallestNonzeroFloat64, 1.0 / 3}
	for i, s := range odd {
		fc := s
		w := warrant.WarrantView{ProtocolVersion: s, PropositionID: s, ViewID: s, PolicyID: s, PolicyVersion: s,
			EvaluatedAt: s, Warrant: warrant.Axes{Acceptance: s, Conflict: s, Verification: s, Currency: s,
				Sufficiency: s, Strength: floats[i%len(floats)], RationaleCodes: []string{s, s}},
			SupportingEvidenceIDs: []string{s}, IndependentLineageCount: -i, FreshestCheck: &fc, Stale: i%2 == 0}
		demoted := []string{s}
		sameAsEncodingJSON(t, s, warrantResult{WarrantView: filled(&w), InlineOriginsDemoted: &demoted})
	}
	for _, f := range floats {
		w := warrant.WarrantView{Warrant: warrant.Axes{Strength: f}}
		sameAsEncodingJSON(t, "float", warrantResult{WarrantView: filled(&w)})
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		w := warrant.WarrantView{Warrant: warrant.Axes{Strength: f}}
		if _, err := encodeWarrant(warrantResult{WarrantView: filled(&w)}); err == nil {
			t.Errorf("strength %v: encoded; encoding/json refuses it", f)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a", "<>&", "\u2028", "\xff", "\"\\", "\x00\x1f", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

func FuzzAppendJSONFloat(f *testing.F) {
	for _, x := range []float64{0, 0.5, 1e-7, 1e21, -3.25} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		want, err := json.Marshal(x)
		if err != nil {
			t.Skip() // NaN and infinities: encodeWarrant refuses them
		}
		if got := appendJSONFloat(nil, x); !bytes.Equal(got, want) {
			t.Fatalf("%v: got %s, want %s", x, got, want)
		}
	})
}

func sameAsEncodingJSON(t *testing.T, name string, r warrantResult) {
	t.Helper()
	want, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("%s: encoding/json: %v", name, err)
	}
	got, err := encodeWarrant(r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", name, got, want)
	}
}
