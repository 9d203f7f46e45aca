package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/sharedtest"
)

// storeTarget is the kernel behind a store whose defects a test picks.
type storeTarget struct {
	kernelTarget
	views map[string]json.RawMessage
	// putRefuses refuses every write with this code; wrongViewID
	// acknowledges a write under another view_id; storedFlip makes
	// warrant from a stored snapshot say TENTATIVE for ACCEPTED.
	putRefuses  string
	wrongViewID bool
	storedFlip  bool
	// collides refuses a second write under one proposition until Fresh.
	collides bool
	fresh    int
	props    map[string]bool
}

func (s *storeTarget) Stores() bool { return true }

func (s *storeTarget) Put(_ context.Context, view json.RawMessage) (Stored, error) {
	if s.putRefuses != "" {
		return Stored{Refusal: &Refusal{Refused: true, Code: s.putRefuses, Error: "no"}}, nil
	}
	wv, ref := EvalDocument(withT(view, "2026-01-01T00:00:00Z"))
	if ref != nil {
		return Stored{Refusal: ref}, nil
	}
	if s.collides && s.props[wv.PropositionID] {
		return Stored{Refusal: &Refusal{Refused: true, Code: "EWP_REFUSE_IMMUTABLE_RECORD", Error: "e1 exists"}}, nil
	}
	if s.props == nil {
		s.props, s.views = map[string]bool{}, map[string]json.RawMessage{}
	}
	s.props[wv.PropositionID] = true
	s.views[wv.PropositionID+"/"+wv.ViewID] = view
	vid := wv.ViewID
	if s.wrongViewID {
		vid += "-x"
	}
	return Stored{PropositionID: wv.PropositionID, ViewID: vid}, nil
}

func (s *storeTarget) Fresh() bool {
	s.fresh++
	s.props = nil
	return true
}

func (s *storeTarget) Get(_ context.Context, pid, vid string) (Answer, error) {
	raw := s.views[pid+"/"+vid]
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return Answer{View: m, Raw: raw}, nil
}

func (s *storeTarget) EvaluateStored(ctx context.Context, pid, vid, t string) (Answer, error) {
	a, err := s.Evaluate(ctx, withT(s.views[pid+"/"+vid], t))
	if s.storedFlip && a.View != nil {
		if w := a.View["warrant"].(map[string]any); w["acceptance"] == "ACCEPTED" {
			w["acceptance"] = "TENTATIVE"
		}
	}
	return a, err
}

func withT(view json.RawMessage, t string) []byte {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(view, &m)
	m["evaluated_at"], _ = json.Marshal(t)
	b, _ := json.Marshal(m)
	return b
}

func ownPack(t *testing.T) []Case {
	t.Helper()
	cases, err := LoadPack("../fixtures/pack")
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// Each stage's loss is named by its class: a refused write and a write
// acknowledged under another id are INGEST_LOSS, a stored snapshot that
// evaluates otherwise than the same view inline is ADAPTER_MAP_LOSS.
func TestStoreStagesClassed(t *testing.T) {
	cases := ownPack(t)
	for _, tc := range []struct {
		name   string
		target *storeTarget
		class  Class
		path   string
	}{
		{"write refused", &storeTarget{putRefuses: "EWP_REFUSE_INVALID_EVIDENCE_VIEW"}, IngestLoss, "stored"},
		{"other view_id", &storeTarget{wrongViewID: true}, IngestLoss, "view_id"},
		{"stored evaluates otherwise", &storeTarget{storedFlip: true}, AdapterMapLoss, "warrant.acceptance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Runner{Target: tc.target}
			run := r.RunCases(t.Context(), nil, cases)
			if run.Conformant {
				t.Fatal("conformant")
			}
			for _, res := range run.Results {
				if res.Failed() && (res.Class != tc.class || res.Findings[0].Path != tc.path) {
					t.Fatalf("%s: %s %+v, want %s on %s", res.Case, res.Class, res.Findings, tc.class, tc.path)
				}
			}
		})
	}
}

// A write refused because an earlier case stored other records under the
// same proposition is retried on a fresh store, not counted a loss.
func TestCollisionStartsAFreshStore(t *testing.T) {
	target := &storeTarget{collides: true}
	run := (&Runner{Target: target}).RunCases(t.Context(), nil, ownPack(t))
	if !run.Conformant || target.fresh == 0 {
		t.Fatalf("conformant %v after %d fresh stores:\n%v", run.Conformant, target.fresh, run.Classes)
	}
}

// An invalid document must be refused; a valid one must not be.
func TestRefusalMismatch(t *testing.T) {
	cases := []Case{
		{Section: Invalid, Name: "bad", Doc: []byte(`{"proposition_id":"P","evaluated_at":"2026-01-01","checks":[{}]}`), MustRefuse: true},
		{Section: Hardening, Name: "good", Doc: []byte(`{"proposition_id":"P","evaluated_at":"2026-01-01"}`), MustRefuse: true},
		{Section: Hardening, Name: "refused", Doc: []byte(`{"evaluated_at":"2026-01-01"}`), Axes: map[string]any{"acceptance": "UNACCEPTED"}},
	}
	run := (&Runner{Target: Kernel()}).RunCases(t.Context(), nil, cases)
	var classes []Class
	for _, r := range run.Results {
		classes = append(classes, r.Class)
	}
	if !slices.Equal(classes, []Class{Pass, RefusalMismatch, RefusalMismatch}) {
		t.Fatalf("classes %v", classes)
	}
}

// strength and rationale_codes are observations; any other field of a
// golden is a WARRANT_MISMATCH with its path.
func TestGoldenFieldsNormativeOrNot(t *testing.T) {
	doc := []byte(`{"proposition_id":"P","evaluated_at":"2026-01-01T00:00:00Z"}`)
	wv, _ := EvalDocument(doc)
	golden := toMap(wv)
	golden["warrant"].(map[string]any)["strength"] = "other"
	run := (&Runner{Target: Kernel()}).RunCases(t.Context(), nil, []Case{{Section: Goldens, Name: "g", Doc: doc, View: golden}})
	if r := run.Results[0]; r.Class != Pass || len(r.Observations) != 1 || r.Observations[0].Path != "warrant.strength" || run.Observations != 1 {
		t.Fatalf("strength: %+v", r)
	}
	golden["checks"] = []any{"k1"}
	run = (&Runner{Target: Kernel()}).RunCases(t.Context(), nil, []Case{{Section: Goldens, Name: "g", Doc: doc, View: golden}})
	if r := run.Results[0]; r.Class != WarrantMismatch || r.Findings[0] != (Finding{Class: WarrantMismatch, Path: "checks", Expected: `["k1"]`, Got: `[]`}) {
		t.Fatalf("checks: %+v", r)
	}
}

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string][]string{
		`ewp-conformance eval`:           {"ewp-conformance", "eval"},
		`python3 'my impl.py' --x "a b"`: {"python3", "my impl.py", "--x", "a b"},
		`sh -c "echo [] | x 'q' && y"`:   {"sh", "-c", "echo [] | x 'q' && y"},
		`a\ b  c`:                        {"a b", "c"},
		`''`:                             {""},
	} {
		got, err := SplitCommand(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{``, `  `, `"open`, `a\`} {
		if _, err := SplitCommand(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// The grounding pack's 77 cases pass on the kernel; a case whose
// expectation is changed fails as WARRANT_MISMATCH naming the field.
func TestGroundingCases(t *testing.T) {
	cases, err := GroundingCases(sharedtest.Path(t, "vre-pack", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	run := (&Runner{Target: Kernel()}).RunCases(t.Context(), nil, cases)
	if !run.Conformant || run.Classes[Pass] != 77 {
		t.Fatalf("grounding pack on the kernel: %v", run.Classes)
	}
	c := cases[0]
	changed := *c.Grounding
	changed.Expect = map[string]any{"grounded": !c.Grounding.Expect["grounded"].(bool)}
	c.Grounding = &changed
	r := (&Runner{Target: Kernel()}).Judge(t.Context(), c)
	if r.Class != WarrantMismatch || len(r.Findings) != 1 || r.Findings[0].Path != "grounding" || !strings.HasPrefix(r.Findings[0].Detail, "grounded: want") {
		t.Fatalf("%+v", r)
	}
	if r := (&Runner{Target: NewEvalTarget([]string{"true"}, TargetOptions{})}).Judge(t.Context(), cases[0]); r.Class != Skipped {
		t.Errorf("an eval target has no check_grounding: %+v", r)
	}
}

// Eval answers each document as soon as it is read, before its input
// ends, so a caller can send one document and wait for its answer
// (PROTOCOL.md rule 2).
func TestEvalAnswersBeforeInputEnds(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = Eval(inR, outW); outW.Close() }()
	defer inW.Close()
	answers := bufio.NewReader(outR)
	for _, doc := range []string{`{"proposition_id":"P","evaluated_at":"2026-01-01"}`, `not json`} {
		if _, err := io.WriteString(inW, doc+"\n"); err != nil {
			t.Fatal(err)
		}
		line := make(chan string, 1)
		go func() { l, _ := answers.ReadString('\n'); line <- l }()
		select {
		case l := <-line:
			if !strings.HasPrefix(l, "{") {
				t.Fatalf("answer %q", l)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no answer to %s while the input stays open", doc)
		}
	}
}

// A --pack that does not exist is named as missing, with where it was
// looked for, not as a directory without cases; a file is named as one.
func TestLoadPackNamesAMissingDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := LoadPack(missing)
	if err == nil || !strings.Contains(err.Error(), "does not exist") || strings.Contains(err.Error(), "is this a pack directory") {
		t.Fatalf("missing pack: %v", err)
	}
	file := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(file, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPack(file); err == nil || !strings.Contains(err.Error(), "is a file, not a pack directory") {
		t.Fatalf("a file as the pack: %v", err)
	}
	if _, err := LoadPack(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is this a pack directory") {
		t.Fatalf("an empty directory: %v", err)
	}
}
