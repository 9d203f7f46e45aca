package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/internal/sharedtest"
	"github.com/ewp-go/ewp/internal/testskip"
	"github.com/ewp-go/ewp/warrant"
)

const sharedPack = "../../shared/ewp-pack"
const sharedCorpus = "../../shared/ewp-differential/public.jsonl.gz"

func needShared(t testing.TB, path string) {
	if _, err := os.Stat(path); err != nil {
		t.Skip(testskip.Message(testskip.Shared, fmt.Sprintf("%s not present (it sits beside the checkout in CI)", path)))
	}
}

// judgeKernel runs the kernel target on the pack in dir.
func judgeKernel(t *testing.T, dir string) *Run {
	t.Helper()
	cases, err := LoadPack(dir)
	if err != nil {
		t.Fatal(err)
	}
	return (&Runner{Target: Kernel()}).RunCases(t.Context(), []string{dir}, cases)
}

// Both packs pass on every field of every golden, the diagnostics
// strength and rationale_codes included (no observation either).
func TestOwnPackConformant(t *testing.T) {
	run := judgeKernel(t, "../fixtures/pack")
	if !run.Conformant || run.Observations > 0 {
		var out bytes.Buffer
		_ = run.WriteText(&out)
		t.Fatalf("project pack is NONCONFORMANT or differs from its goldens' diagnostics:\n%s", out.String())
	}
}

func TestReferencePackConformant(t *testing.T) {
	needShared(t, sharedPack)
	run := judgeKernel(t, sharedPack)
	want := map[string][2]int{Canonical: {14, 14}, Pathological: {12, 12}, Hardening: {26, 26}, Invalid: {35, 35}, Goldens: {26, 26}}
	for _, c := range run.Counts {
		if w := want[c.Section]; c.Passed != w[0] || c.Total != w[1] {
			t.Errorf("%s: %d/%d, want %d/%d", c.Section, c.Passed, c.Total, w[0], w[1])
		}
	}
	if !run.Conformant || len(run.Counts) != len(want) || run.Observations > 0 {
		var out bytes.Buffer
		_ = run.WriteText(&out)
		t.Fatalf("reference pack:\n%s", out.String())
	}
}

// TestCorpusParity runs the public differential corpus and demands the
// reference's answer on every case: the verdict, the axes, and every
// field of every WarrantView (diagnostics included).
func TestCorpusParity(t *testing.T) {
	cases, err := LoadCorpus(sharedtest.Path(t, "ewp-differential", "public.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := CheckCorpus(cases)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p.WriteText(&out)
	t.Log(strings.SplitN(out.String(), "\n", 5)[:4])
	evaluated := 0
	for _, c := range cases {
		if !c.Expect.Refused {
			evaluated++
		}
	}
	if p.ViewTotal != evaluated {
		t.Errorf("%d of %d evaluated cases carry the reference's warrant_view; the comparison would skip the rest", p.ViewTotal, evaluated)
	}
	if !p.Agrees() {
		t.Fatalf("differential corpus disagrees:\n%s", out.String())
	}
}

// The corpus comparer must see a difference in any field, a diagnostic as
// much as an axis, and name its path.
func TestCorpusComparerSeesEveryField(t *testing.T) {
	doc := `{"proposition_id":"P","view_id":"v","evaluated_at":"2026-01-01T00:00:00Z",` +
		`"lineage":[{"kind":"superseded_by","from_id":"Q","to_id":"R"}]}`
	w, ref := EvalDocument([]byte(doc))
	if ref != nil {
		t.Fatal(ref.Error)
	}
	right, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	edits := map[string]func(m map[string]any){
		"":                         func(map[string]any) {},
		"warrant.strength":         func(m map[string]any) { m["warrant"].(map[string]any)["strength"] = 0.5 },
		"warrant.rationale_codes":  func(m map[string]any) { m["warrant"].(map[string]any)["rationale_codes"] = []string{} },
		"superseded_by":            func(m map[string]any) { m["superseded_by"] = []string{"R"} },
		"freshest_check":           func(m map[string]any) { m["freshest_check"] = "k1" },
		"falsification_conditions": func(m map[string]any) { delete(m, "falsification_conditions") },
	}
	for path, edit := range edits {
		var m map[string]any
		_ = json.Unmarshal(right, &m)
		edit(m)
		var c CorpusCase
		c.ID, c.Doc = "case", json.RawMessage(doc)
		c.Expect.Axes = map[string]string{}
		for _, k := range axisFields {
			c.Expect.Axes[k] = m["warrant"].(map[string]any)[k].(string)
		}
		c.Expect.WarrantView, _ = json.Marshal(m)
		p, err := CheckCorpus([]CorpusCase{c})
		if err != nil {
			t.Fatal(err)
		}
		if path == "" {
			if !p.Agrees() || p.View != 1 {
				t.Errorf("an unchanged view differs: %+v", p.Diffs)
			}
			continue
		}
		if p.Agrees() || p.View != 0 || p.FieldDiffs[path] != 1 || len(p.Diffs) != 1 {
			t.Errorf("%s changed: agrees=%v, diffs %+v", path, p.Agrees(), p.Diffs)
		}
	}
}

// The eval interface answers every line, in order, and refuses what is
// not JSON instead of failing.
func TestEvalOneAnswerPerLine(t *testing.T) {
	good := `{"proposition_id":"P","evaluated_at":"2026-01-01T00:00:00Z"}`
	in := strings.Join([]string{good, "not json", "", `{"proposition_id":"P"}`, "[1,2]", good + "\r"}, "\n")
	var out bytes.Buffer
	if err := Eval(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	wantRefused := []bool{false, true, true, true, true, false}
	if len(lines) != len(wantRefused) {
		t.Fatalf("%d answers for %d lines:\n%s", len(lines), len(wantRefused), out.String())
	}
	for i, line := range lines {
		var a map[string]any
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("answer %d is not JSON: %s", i, line)
		}
		refused, _ := a["refused"].(bool)
		if refused != wantRefused[i] {
			t.Errorf("line %d: refused=%v, want %v (%s)", i, refused, wantRefused[i], line)
		}
		if refused && (a["code"] == "" || a["error"] == "") {
			t.Errorf("line %d: refusal without code or message: %s", i, line)
		}
	}
	var w map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &w)
	if w["view_id"] == nil || w["independent_lineage_count"] == nil || w["warrant"] == nil {
		t.Errorf("evaluation lacks normative fields or diagnostics: %s", lines[0])
	}
}

// A line longer than any document may be is refused by its limit and read
// no further than its end; the next line is answered as usual. The long
// line is 16 times the buffer Eval keeps, so keeping it whole would show.
func TestEvalRefusesOverlongLine(t *testing.T) {
	good := `{"proposition_id":"P","evaluated_at":"2026-01-01T00:00:00Z"}`
	long := io.MultiReader(strings.NewReader(`{"proposition_id":"`),
		io.LimitReader(repeatReader('x'), int64(16*maxLine)), strings.NewReader("\"}\n"+good+"\n"))
	var out bytes.Buffer
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := Eval(long, &out); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d answers for 2 lines: %.300s", len(lines), out.String())
	}
	var first Refusal
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || !first.Refused || first.Code != "EWP_REFUSE_LIMIT_EXCEEDED" {
		t.Errorf("over-long line answered %s, want a EWP_REFUSE_LIMIT_EXCEEDED refusal", lines[0])
	}
	if strings.Contains(lines[1], `"refused"`) {
		t.Errorf("the line after it was refused: %s", lines[1])
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(4*maxLine) {
		t.Errorf("Eval allocated %d bytes for a %d-byte line; the bound is a few buffers of %d", grew, 16*maxLine, maxLine)
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// BenchmarkEvalCorpus runs the whole public corpus through Eval end to end
// (JSON Lines in, JSON Lines out), reporting time per document.
func BenchmarkEvalCorpus(b *testing.B) {
	needShared(b, sharedCorpus)
	cases, err := LoadCorpus(sharedCorpus)
	if err != nil {
		b.Fatal(err)
	}
	var in bytes.Buffer
	for _, c := range cases {
		in.Write(c.Doc)
		in.WriteByte('\n')
	}
	data := in.Bytes()
	b.SetBytes(int64(len(data) / len(cases)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Eval(bytes.NewReader(data), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cases)), "ns/doc")
}

// eval refuses a document whose evaluated_at is not a string (even one
// whose str() would parse, like 20260901) as an invalid view, and one
// without an instant as EWP_MISSING_EVALUATED_AT.
func TestEvalEvaluatedAtTypes(t *testing.T) {
	cases := []struct{ raw, code string }{
		{`20260901`, warrant.CodeInvalidView},
		{`1.5`, warrant.CodeInvalidView},
		{`true`, warrant.CodeInvalidView},
		{`["2026-09-01"]`, warrant.CodeInvalidView},
		{`{}`, warrant.CodeInvalidView},
		{`null`, warrant.CodeMissingEvaluatedAt},
		{`""`, warrant.CodeMissingEvaluatedAt},
	}
	for _, c := range cases {
		wv, ref := EvalDocument([]byte(`{"proposition_id":"P","evaluated_at":` + c.raw + `}`))
		if ref == nil {
			t.Errorf("evaluated_at %s: evaluated at %q, want refusal %s", c.raw, wv.EvaluatedAt, c.code)
			continue
		}
		rule := "is required"
		if c.code == warrant.CodeInvalidView {
			rule = "must be a string"
		}
		if ref.Code != c.code || !strings.HasPrefix(ref.Error, "evaluated_at: "+rule) {
			t.Errorf("evaluated_at %s: got %s %q, want %s naming evaluated_at", c.raw, ref.Code, ref.Error, c.code)
		}
	}
	if _, ref := EvalDocument([]byte(`{"proposition_id":"P"}`)); ref == nil || ref.Code != warrant.CodeMissingEvaluatedAt {
		t.Errorf("absent evaluated_at: got %+v, want %s", ref, warrant.CodeMissingEvaluatedAt)
	}
}
