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

// isoQuick must answer as the full port does wherever it answers at all.
func FuzzIsoQuick(f *testing.F) {
	for _, s := range []string{"2026-09-01T00:00:00Z", "2026-02-29T10:00:00+02:00", "2024-02-29T23:59:59-23:59",
		"0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "2026-09-01T00:00:00", "2026-09-01T24:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		quick, ok := isoQuick(s)
		if !ok {
			return
		}
		full, fullOK := isoFull(s)
		if !fullOK || full != quick {
			t.Fatalf("%q: quick %v, full %v %v", s, quick, full, fullOK)
		}
	})
}

// isoFull is ParseInstant without its quick path.
func isoFull(s string) (Instant, bool) {
	if !isoValidWTF8(s) {
		return 0, false
	}
	s = isoStrip(s)
	return isoParse(strings.ReplaceAll(s, "Z", "+00:00"))
}
