package conformance

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Run is the outcome of judging a target on a set of cases.
type Run struct {
	Protocol   string         `json:"protocol"`
	Policy     string         `json:"policy"`
	Target     string         `json:"target"`
	Sources    []string       `json:"sources"`
	Conformant bool           `json:"conformant"`
	Counts     []SectionCount `json:"counts"`
	// Classes counts the cases of each class, PASS included.
	Classes map[Class]int `json:"classes"`
	// Observations counts the cases with an EXPECTED_DIVERGENCE.
	Observations int      `json:"observations"`
	Results      []Result `json:"results"`
}

// SectionCount is passed/failed/skipped of one section.
type SectionCount struct {
	Section string `json:"section"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
	Total   int    `json:"total"`
}

// RunCases judges every case, in order, and sums up. A conformant run
// has no failed case; skipped cases and observations do not count
// against it.
func (r *Runner) RunCases(ctx context.Context, sources []string, cases []Case) *Run {
	run := &Run{Protocol: warrantProtocol, Policy: warrantPolicy, Target: r.Target.Describe(),
		Sources: sources, Classes: map[Class]int{}, Results: make([]Result, 0, len(cases))}
	counts := map[string]*SectionCount{}
	var order []string
	for _, c := range cases {
		res := r.Judge(ctx, c)
		run.Results = append(run.Results, res)
		sc := counts[c.Section]
		if sc == nil {
			sc = &SectionCount{Section: c.Section}
			counts[c.Section] = sc
			order = append(order, c.Section)
		}
		sc.Total++
		switch {
		case res.Class == Skipped:
			sc.Skipped++
		case res.Failed():
			sc.Failed++
		default:
			sc.Passed++
		}
		run.Classes[res.Class]++
		if hasDivergence(res) {
			run.Observations++
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return sectionRank(a) - sectionRank(b) })
	for _, s := range order {
		run.Counts = append(run.Counts, *counts[s])
	}
	run.Conformant = true
	for _, sc := range run.Counts {
		if sc.Failed > 0 {
			run.Conformant = false
		}
	}
	return run
}

// sectionRank orders the pack's sections as the reference's runner
// prints them, any other section (the corpus) after them.
func sectionRank(section string) int {
	if i := slices.Index(sections, section); i >= 0 {
		return i
	}
	return len(sections)
}

func hasDivergence(r Result) bool {
	for _, o := range r.Observations {
		if o.Class == ExpectedDivergence {
			return true
		}
	}
	return false
}

// FirstFailures is how many failed cases WriteText shows in full.
const FirstFailures = 10

// WriteText prints the run for people: a line per section, the count per
// class, the verdict, then the first failed cases with their field diffs.
// Everything a target printed is shown quoted.
func (run *Run) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "EWP conformance: %s (policy %s)\n", run.Protocol, run.Policy)
	fmt.Fprintf(w, "target: %s\n", run.Target)
	for _, s := range run.Sources {
		fmt.Fprintf(w, "cases:  %s\n", s)
	}
	fmt.Fprintln(w)
	for _, c := range run.Counts {
		line := fmt.Sprintf("  %-16s %d/%d", c.Section, c.Passed, c.Total)
		if c.Skipped > 0 {
			line += fmt.Sprintf(" (%d skipped)", c.Skipped)
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
	for _, cl := range append([]Class{Pass}, append(stageOrder, Skipped)...) {
		if n := run.Classes[cl]; n > 0 {
			fmt.Fprintf(w, "  %-20s %d\n", cl, n)
		}
	}
	if run.Observations > 0 {
		fmt.Fprintf(w, "  %-20s %d (observations, not failures)\n", ExpectedDivergence, run.Observations)
	}
	verdict := "CONFORMANT"
	if !run.Conformant {
		verdict = "NONCONFORMANT"
	}
	fmt.Fprintf(w, "\nResult: %s\n", verdict)
	shown := 0
	for _, res := range run.Results {
		if !res.Failed() {
			continue
		}
		if shown == FirstFailures {
			fmt.Fprintf(w, "  … %d more failed cases (--json or --junit FILE lists them all)\n", run.failed()-shown)
			break
		}
		shown++
		fmt.Fprintf(w, "  FAIL %s %s/%s\n", res.Class, res.Section, res.Case)
		for _, f := range res.Findings {
			fmt.Fprintf(w, "       %s\n", f.describe())
		}
	}
	return nil
}

func (run *Run) failed() int {
	n := 0
	for _, r := range run.Results {
		if r.Failed() {
			n++
		}
	}
	return n
}

// describe prints a finding on one line: class, path, both values.
func (f Finding) describe() string {
	var b strings.Builder
	b.WriteString(string(f.Class))
	switch {
	case f.Expected != "" || f.Got != "":
		fmt.Fprintf(&b, " %s: expected %s, got %s", f.Path, f.Expected, f.Got)
	case f.Path != "":
		b.WriteString(" " + f.Path)
	}
	if f.Detail != "" {
		b.WriteString(" — ")
		b.WriteString(strings.ToValidUTF8(f.Detail, "\uFFFD"))
	}
	return escapeControls(b.String())
}

// escapeControls quotes control characters so that nothing a target wrote
// can move the cursor or recolour the terminal.
func escapeControls(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '�'
		}
		return r
	}, s)
}

// WriteJSON prints the run as one JSON object.
func (run *Run) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(run)
}

// JUnit XML, in the shape CI systems read (the Ant/Jenkins schema): one
// testsuite per section, one testcase per case, a failure element on a
// failed case (type = the class), skipped on a skipped one.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit prints the run as JUnit XML.
func (run *Run) WriteJUnit(w io.Writer) error {
	out := junitSuites{Name: "ewp-conformance " + run.Target}
	idx := map[string]int{}
	for _, res := range run.Results {
		i, ok := idx[res.Section]
		if !ok {
			i = len(out.Suites)
			idx[res.Section] = i
			out.Suites = append(out.Suites, junitSuite{Name: res.Section})
		}
		s := &out.Suites[i]
		jc := junitCase{Name: res.Case, Classname: "ewp." + strings.ReplaceAll(res.Section, " ", "_"),
			Time: fmt.Sprintf("%.3f", res.Seconds)}
		switch {
		case res.Class == Skipped:
			jc.Skipped = &junitSkipped{Message: xmlText(res.Findings[0].Detail)}
			s.Skipped++
		case res.Failed():
			jc.Failure = &junitFailure{Type: string(res.Class), Message: xmlText(res.Findings[0].describe()), Body: xmlText(findingLines(res.Findings))}
			s.Failures++
			out.Failures++
		}
		if len(res.Observations) > 0 {
			jc.SystemOut = xmlText(findingLines(res.Observations))
		}
		s.Tests++
		out.Tests++
		s.Cases = append(s.Cases, jc)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func findingLines(fs []Finding) string {
	lines := make([]string, len(fs))
	for i, f := range fs {
		lines[i] = f.describe()
	}
	return strings.Join(lines, "\n")
}

// xmlText keeps only characters XML 1.0 can carry (encoding/xml escapes
// markup but writes other control characters as they are).
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r != 0xFFFE && r != 0xFFFF) {
			return r
		}
		return '�'
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
