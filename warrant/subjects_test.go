package warrant

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// bindsPairwise is the definition of subject binding (§4 step 3) written
// the obvious way: every check subject against every view subject, each
// folded with Python's str.lower(). The matcher must agree with it.
func bindsPairwise(check, view []string) bool {
	if len(check) == 0 && len(view) == 0 {
		return true
	}
	for _, a := range check {
		for _, b := range view {
			if pyLower(a) == pyLower(b) {
				return true
			}
		}
	}
	return false
}

// caseRunes mixes ASCII with letters whose Python lower case is not Go's
// simple mapping (İ, final Σ), combining marks and other cased scripts.
var caseRunes = []rune{'a', 'A', 'i', 'I', 'İ', '\u0307', 'Σ', 'σ', 'ς', 'Ä', 'ä', 'ß', 'K', '\u212A', '-', ' ', '.'}

func randomSubjects(r *rand.Rand, maxLen int) []string {
	n := r.IntN(maxLen + 1)
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for range r.IntN(4) + 1 {
			b.WriteRune(caseRunes[r.IntN(len(caseRunes))])
		}
		out[i] = b.String()
	}
	return out
}

func TestBindsAgreesWithPairwiseDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	matches := 0
	for i := range 10000 {
		check := randomSubjects(r, 4)
		// Views on both sides of the small-set threshold.
		view := randomSubjects(r, 2*smallSubjects+2)
		var s subjectSet
		s.reset(view)
		want := bindsPairwise(check, view)
		if got := s.binds(check); got != want {
			t.Fatalf("case %d: check %q view %q: binds %v, pairwise definition %v", i, check, view, got, want)
		}
		if want {
			matches++
		}
	}
	if matches < 500 {
		t.Fatalf("only %d of the random cases bind; the test would not exercise matching", matches)
	}
}

// TestBindsSpecialFolds pins the folds that differ from Go's simple lower
// case, so a matcher built on strings.ToLower would fail here.
func TestBindsSpecialFolds(t *testing.T) {
	cases := []struct {
		check, view string
		want        bool
	}{
		{"İSTANBUL", "i\u0307stanbul", true}, // Python: İ lowers to i + combining dot
		{"İSTANBUL", "istanbul", false},
		{"ΟΔΟΣ", "οδος", true}, // final sigma lowers to ς
		{"ΟΔΟΣ", "οδοσ", false},
		{"ÄRGER", "ärger", true},
	}
	for _, c := range cases {
		for _, n := range []int{1, 3 * smallSubjects} { // small and large view
			view := []string{c.view}
			for i := 1; i < n; i++ {
				view = append(view, fmt.Sprintf("other-%d", i))
			}
			var s subjectSet
			s.reset(view)
			if got := s.binds([]string{c.check}); got != c.want {
				t.Errorf("%q vs %q (view of %d): %v, want %v", c.check, c.view, n, got, c.want)
			}
		}
	}
}

// largeSubjectView has n view subjects and checks trusted external checks
// of n subjects each, none shared, so matching must look at all of them.
func largeSubjectView(n, checks int) *View {
	v := &View{PropositionID: "P", RetrievalScope: DefaultRetrievalScope, Freshness: 2592000}
	for i := range n {
		v.Subjects = append(v.Subjects, fmt.Sprintf("Host-%d", i))
	}
	for k := range checks {
		c := Check{CheckID: fmt.Sprintf("k%d", k), Method: "tool_observation", Result: Supports,
			ObservedAt: "2026-09-01T00:00:00Z", Source: SourceRef{OriginType: "tool", LineageID: "L"}}
		for i := range n {
			c.Subjects = append(c.Subjects, fmt.Sprintf("Other-%d-%d", k, i))
		}
		v.Checks = append(v.Checks, c)
	}
	return v
}

// Matching is near-linear: 20,000 view subjects against five checks of
// 20,000 subjects each took minutes pairwise; it must take well under a
// second (the bound is generous for a loaded machine).
func TestLargeSubjectListsEvaluateFast(t *testing.T) {
	v := largeSubjectView(20000, 5)
	start := time.Now()
	w, err := Evaluate(v, "2026-09-21T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("evaluation took %v; subject matching is not near-linear", d)
	}
	if w.Warrant.Verification != VerIndirect {
		t.Fatalf("verification %s, want INDIRECT (no shared subject)", w.Warrant.Verification)
	}
}
