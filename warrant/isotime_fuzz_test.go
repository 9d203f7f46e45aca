package warrant

import (
	"strings"
	"testing"
)

// isoMaxInstant is 9999-12-31T23:59:59.999999Z, the last instant whose
// RFC 3339 form CPython can read back; offsets can push past either end.
const isoMaxInstant = Instant(315_537_897_599_999_999)

func FuzzParseInstant(f *testing.F) {
	for _, c := range isoGrammarCases {
		f.Add(c.in)
	}
	for _, c := range isoRefusalCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseInstant(s)
		if !ok {
			return
		}
		// Python strips before anything else, so extra white space on
		// either side cannot change the answer.
		if again, ok2 := ParseInstant("\u3000 " + s + "\t\x1f"); !ok2 || again != got {
			t.Fatalf("padding %q changed %v to %v, %v", s, got, again, ok2)
		}
		// Z is defined as "+00:00", so spelling it out changes nothing.
		if again, ok2 := ParseInstant(strings.ReplaceAll(s, "Z", "+00:00")); !ok2 || again != got {
			t.Fatalf("expanding Z in %q changed %v to %v, %v", s, got, again, ok2)
		}
		if got < 0 || got > isoMaxInstant {
			return // its RFC 3339 form has year 0 or 10000
		}
		back, ok2 := ParseInstant(got.String())
		if !ok2 || back != got {
			t.Fatalf("%q -> %v -> %v, %v", s, got, back, ok2)
		}
	})
}
