package warrant

import (
	"strconv"
	"testing"
)

// hundredths must round every strength the weights can produce exactly as
// formatting to two places and reading back (Python's round) does.
func TestStrengthRounding(t *testing.T) {
	n := 0
	for _, acc := range []string{Accepted, Tentative, Unaccepted} {
		for _, ver := range []string{VerHuman, VerExternal, VerIndirect, VerNone} {
			for _, con := range []string{ConflictOpen, ConflictResolved, ConflictNone} {
				for _, cur := range []string{Current, Stale, Superseded} {
					for _, suf := range []string{Sufficient, Insufficient, Degraded} {
						for _, lineages := range []int{0, 1, 2} {
							ax := Axes{Acceptance: acc, Verification: ver, Conflict: con, Currency: cur, Sufficiency: suf}
							raw := rawStrength(ax, lineages)
							got := hundredths(raw)
							want, _ := strconv.ParseFloat(strconv.FormatFloat(raw, 'f', 2, 64), 64)
							if got != want {
								t.Errorf("%+v lineages %d: strength %v, want %v (unrounded %v)", ax, lineages, got, want, raw)
							}
							n++
						}
					}
				}
			}
		}
	}
	if n != 972 {
		t.Fatalf("checked %d combinations", n)
	}
}
