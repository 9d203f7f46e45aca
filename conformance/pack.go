package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Section names of the report, in print order.
const (
	Canonical    = "Canonical"
	Pathological = "Pathological"
	Hardening    = "Hardening"
	Invalid      = "Invalid refused"
	Goldens      = "Goldens"
)

var sections = []string{Canonical, Pathological, Hardening, Invalid, Goldens}

// Failure is one case that did not conform: which field, and what the
// pack expected against what the kernel gave.
type Failure struct {
	Section  string `json:"section"`
	Case     string `json:"case"`
	Field    string `json:"field"`
	Expected any    `json:"expected"`
	Actual   any    `json:"actual"`
}

// Count is passed/total for one section.
type Count struct {
	Section string `json:"section"`
	Passed  int    `json:"passed"`
	Total   int    `json:"total"`
}

// Report is the outcome of running one pack.
type Report struct {
	Pack       string    `json:"pack"`
	Counts     []Count   `json:"counts"`
	Conformant bool      `json:"conformant"`
	Failures   []Failure `json:"failures"`
	// Notes are non-normative differences (strength, rationale codes):
	// reported so they can be chased, never a reason to fail.
	Notes []Failure `json:"notes"`
}

var (
	canonicalName    = regexp.MustCompile(`^\d\d-`)
	pathologicalName = regexp.MustCompile(`^p\d+-`)
)

// sectionOf files a fixture under the reference pack's three groups by
// its file-name convention: NN-* canonical, pN-* pathological, the rest
// hardening.
func sectionOf(name string) string {
	switch {
	case canonicalName.MatchString(name):
		return Canonical
	case pathologicalName.MatchString(name):
		return Pathological
	}
	return Hardening
}

// RunPack runs every fixture, invalid view and golden of the pack in dir.
func RunPack(dir string) (*Report, error) {
	r := &Report{Pack: dir, Failures: []Failure{}, Notes: []Failure{}}
	counts := map[string]*Count{}
	for _, s := range sections {
		counts[s] = &Count{Section: s}
	}
	steps := []func(string, *Report, map[string]*Count) error{runFixtures, runInvalid, runGoldens}
	for _, step := range steps {
		if err := step(dir, r, counts); err != nil {
			return nil, err
		}
	}
	r.Conformant = len(r.Failures) == 0
	for _, s := range sections {
		if c := counts[s]; c.Total > 0 {
			r.Counts = append(r.Counts, *c)
		}
	}
	if len(r.Counts) == 0 {
		return nil, fmt.Errorf("%s: no fixtures/, invalid/ or goldens/ cases found; is this a pack directory?", dir)
	}
	return r, nil
}

func jsonFiles(dir string) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	slices.Sort(names)
	return names, err
}

func caseName(path string) string { return strings.TrimSuffix(filepath.Base(path), ".json") }

func readJSON(path string, into any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

var axisFields = []string{"acceptance", "conflict", "verification", "currency", "sufficiency"}

func runFixtures(dir string, r *Report, counts map[string]*Count) error {
	files, err := jsonFiles(filepath.Join(dir, "fixtures"))
	if err != nil {
		return err
	}
	for _, f := range files {
		name := caseName(f)
		var want map[string]any
		if err := readJSON(filepath.Join(dir, "expected", name+".json"), &want); err != nil {
			return fmt.Errorf("fixture %s has no readable expected/%s.json: %w", name, name, err)
		}
		sec := sectionOf(name)
		counts[sec].Total++
		got, fails := evalFile(f, sec, name)
		if got != nil {
			fails = compareExpected(sec, name, want, got)
		}
		r.Failures = append(r.Failures, fails...)
		if len(fails) == 0 {
			counts[sec].Passed++
		}
	}
	return nil
}

func evalFile(path, sec, name string) (map[string]any, []Failure) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, []Failure{{sec, name, "file", "readable", err.Error()}}
	}
	wv, ref := EvalDocument(b)
	if ref != nil {
		return nil, []Failure{{sec, name, "refused", false, ref.Code + ": " + ref.Error}}
	}
	return toMap(wv), nil
}

func toMap(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func compareExpected(sec, name string, want, got map[string]any) []Failure {
	var fails []Failure
	axes, _ := got["warrant"].(map[string]any)
	for _, k := range axisFields {
		if want[k] != axes[k] {
			fails = append(fails, Failure{sec, name, k, want[k], axes[k]})
		}
	}
	for _, k := range []string{"protocol_version", "policy_version", "evaluated_at"} {
		if w, ok := want[k]; ok && w != got[k] {
			fails = append(fails, Failure{sec, name, k, w, got[k]})
		}
	}
	return fails
}

func runInvalid(dir string, r *Report, counts map[string]*Count) error {
	files, err := jsonFiles(filepath.Join(dir, "invalid"))
	if err != nil {
		return err
	}
	for _, f := range files {
		name := caseName(f)
		counts[Invalid].Total++
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if _, ref := EvalDocument(b); ref != nil {
			counts[Invalid].Passed++
			continue
		}
		r.Failures = append(r.Failures, Failure{Invalid, name, "refused", true, false})
	}
	return nil
}

// goldenFields are compared exactly; id arrays included.
var goldenFields = []string{
	"protocol_version", "proposition_id", "view_id", "policy_id", "policy_version", "evaluated_at",
	"independent_lineage_count", "supporting_evidence_ids", "opposing_evidence_ids", "checks",
	"open_conflicts", "resolved_conflicts",
}

// goldenNotes are the reference's diagnostics we match where we can but
// never fail on.
var goldenNotes = []string{"strength", "rationale_codes"}

func runGoldens(dir string, r *Report, counts map[string]*Count) error {
	files, err := jsonFiles(filepath.Join(dir, "goldens"))
	if err != nil {
		return err
	}
	for _, f := range files {
		name := caseName(f)
		counts[Goldens].Total++
		var want map[string]any
		if err := readJSON(f, &want); err != nil {
			return err
		}
		got, fails := evalFile(filepath.Join(dir, "fixtures", name+".json"), Goldens, name)
		if got != nil {
			fails = compareGolden(name, want, got, r)
		}
		r.Failures = append(r.Failures, fails...)
		if len(fails) == 0 {
			counts[Goldens].Passed++
		}
	}
	return nil
}

func compareGolden(name string, want, got map[string]any, r *Report) []Failure {
	var fails []Failure
	for _, k := range goldenFields {
		if !equalJSON(want[k], got[k]) {
			fails = append(fails, Failure{Goldens, name, k, want[k], got[k]})
		}
	}
	wa, _ := want["warrant"].(map[string]any)
	ga, _ := got["warrant"].(map[string]any)
	for _, k := range axisFields {
		if wa[k] != ga[k] {
			fails = append(fails, Failure{Goldens, name, "warrant." + k, wa[k], ga[k]})
		}
	}
	for _, k := range goldenNotes {
		if !equalJSON(wa[k], ga[k]) {
			r.Notes = append(r.Notes, Failure{Goldens, name, "warrant." + k, wa[k], ga[k]})
		}
	}
	for _, k := range []string{"freshest_check", "stale", "omitted_sources", "derived_from", "supersedes", "superseded_by", "falsification_conditions"} {
		if !equalJSON(want[k], got[k]) {
			r.Notes = append(r.Notes, Failure{Goldens, name, k, want[k], got[k]})
		}
	}
	return fails
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
