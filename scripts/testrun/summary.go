package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ewp-go/ewp/internal/testskip"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent, with
// the build events of `go test -json`).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output, build-fail
	Test       string
	Output     string
}

// skip is one skipped test and the message it skipped with.
type skip struct {
	pkg, test, reason string
}

// summary follows a `go test -json` stream: it prints what plain go test
// would (closing lines, failing tests' output, build output) as it comes,
// and remembers the skips for the end.
type summary struct {
	w       io.Writer
	pending map[string][]string // output of running tests and packages, by pkg + "\x00" + test
	skips   []skip
	fails   []string // "pkg Test", or "pkg" for a package that failed with no failed test
	fail    bool
	pkgFail map[string]bool // packages with a failed test
}

func newSummary(w io.Writer) *summary {
	return &summary{w: w, pending: map[string][]string{}, pkgFail: map[string]bool{}}
}

// read consumes the stream to its end. A line that is not an event (go
// test printed something itself) is passed through.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20) // a test may print long lines
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Action == "" {
			fmt.Fprintln(s.w, sc.Text())
			continue
		}
		s.event(e)
	}
	return sc.Err()
}

func (s *summary) event(e event) {
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.w, e.Output)
	case "build-fail":
		s.fail = true
	case "output":
		if !isProgress(e.Output) {
			s.pending[key] = append(s.pending[key], e.Output)
		}
	case "fail":
		s.fail = true
		s.flush(key, showAll)
		if e.Test != "" {
			s.fails = append(s.fails, e.Package+" "+e.Test)
			s.pkgFail[e.Package] = true
		} else if !s.pkgFail[e.Package] {
			s.fails = append(s.fails, e.Package)
		}
	case "skip":
		if e.Test != "" {
			s.skips = append(s.skips, skip{e.Package, e.Test, skipReason(s.pending[key])})
		}
		s.flush(key, quietUnlessPackage(e.Test)) // a package without tests: its "?" line
	case "pass":
		s.flush(key, quietUnlessPackage(e.Test))
	}
}

// What flush prints of the output it kept.
type show int

const (
	showNone    show = iota // a passed or skipped test (a skip is summed up at the end)
	showClosing             // a passed package: its closing "ok" or "?" line, as go test prints
	showAll                 // a failure: everything, as go test prints
)

func quietUnlessPackage(test string) show {
	if test == "" {
		return showClosing
	}
	return showNone
}

// flush prints (when show is set) and forgets the output kept for key. A
// passing package prints only its closing "ok" line, as go test does.
func (s *summary) flush(key string, what show) {
	lines := s.pending[key]
	delete(s.pending, key)
	for _, l := range lines {
		if what == showAll || (what == showClosing && (strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "?"))) {
			fmt.Fprint(s.w, l)
		}
	}
}

// isProgress reports the lines go test prints only with -v.
func isProgress(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// skipReason is the message a skipped test gave: its output lines, less
// the "--- SKIP" line and the file:line prefix t.Skip adds, joined.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		if file, rest, ok := strings.Cut(t, ": "); ok && strings.Contains(file, ".go:") && !strings.Contains(file, " ") {
			t = rest
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

func (s *summary) failed() bool { return s.fail }

// group is the skips that share a reason.
type group struct {
	title string
	skips []skip
}

// groups sorts the skips by reason: the tags of testskip first, in a fixed
// order, then every other message by itself.
func (s *summary) groups() []group {
	byTitle := map[string]*group{}
	var order []string
	for _, sk := range s.skips {
		title := sk.reason
		if tag, _, ok := strings.Cut(sk.reason, ": "); ok && testskip.Advice[tag] != "" {
			title = testskip.Advice[tag]
		}
		g, ok := byTitle[title]
		if !ok {
			g = &group{title: title}
			byTitle[title] = g
			order = append(order, title)
		}
		g.skips = append(g.skips, sk)
	}
	rank := func(title string) int {
		for i, tag := range []string{testskip.PostgreSQL, testskip.Chromium, testskip.Shared} {
			if title == testskip.Advice[tag] {
				return i
			}
		}
		return 3
	}
	slices.SortStableFunc(order, func(a, b string) int { return rank(a) - rank(b) })
	out := make([]group, len(order))
	for i, t := range order {
		out[i] = *byTitle[t]
	}
	return out
}

// maxNamed bounds the test names listed per package in a group.
const maxNamed = 6

// write prints the closing summary: every skip by reason, then the
// failures, then one line with the result.
func (s *summary) write() {
	if len(s.skips) > 0 {
		fmt.Fprintf(s.w, "\nSKIPPED: %d tests did not run, by reason:\n", len(s.skips))
		for _, g := range s.groups() {
			fmt.Fprintf(s.w, "  %s: %d\n", g.title, len(g.skips))
			if tag, detail, ok := strings.Cut(g.skips[0].reason, ": "); ok && testskip.Advice[tag] != "" && tag != testskip.Helper {
				fmt.Fprintf(s.w, "    (%s)\n", detail)
			}
			for _, line := range byPackage(g.skips) {
				fmt.Fprintf(s.w, "    %s\n", line)
			}
		}
	}
	if len(s.fails) > 0 {
		fmt.Fprintf(s.w, "\nFAILED: %d\n", len(s.fails))
		for _, f := range s.fails {
			fmt.Fprintf(s.w, "  %s\n", f)
		}
	}
	switch {
	case s.fail:
		fmt.Fprintln(s.w, "FAIL")
	case len(s.skips) > 0:
		fmt.Fprintf(s.w, "ok (%d tests skipped, named above)\n", len(s.skips))
	default:
		fmt.Fprintln(s.w, "ok (nothing skipped)")
	}
}

// byPackage lists a group's tests per package, a few names each.
func byPackage(skips []skip) []string {
	var pkgs []string
	tests := map[string][]string{}
	for _, sk := range skips {
		if _, ok := tests[sk.pkg]; !ok {
			pkgs = append(pkgs, sk.pkg)
		}
		tests[sk.pkg] = append(tests[sk.pkg], sk.test)
	}
	out := make([]string, len(pkgs))
	for i, p := range pkgs {
		names := tests[p]
		shown := strings.Join(names[:min(len(names), maxNamed)], ", ")
		if len(names) > maxNamed {
			shown += fmt.Sprintf(" and %d more", len(names)-maxNamed)
		}
		out[i] = fmt.Sprintf("%s: %s", strings.TrimPrefix(p, "github.com/ewp-go/ewp/"), shown)
	}
	return out
}
