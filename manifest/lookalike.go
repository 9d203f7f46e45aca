package manifest

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// confusableSeparators look like "/" or "\" without being one. NFKC
// already changes the fullwidth and small forms (U+FF0F, U+FF3C,
// U+FE68); these it leaves alone, so they are named here. "\" itself is
// refused too: on Linux it is an ordinary byte, but a server that runs
// on Windows, or normalises paths as if it did, reads it as a separator.
var confusableSeparators = map[rune]string{
	'\\':     "a backslash",
	'\u2044': "FRACTION SLASH",
	'\u2215': "DIVISION SLASH",
	'\u2216': "SET MINUS",
	'\u2571': "BOX DRAWINGS LIGHT DIAGONAL",
	'\u2572': "BOX DRAWINGS LIGHT DIAGONAL",
	'\u29F5': "REVERSE SOLIDUS OPERATOR",
	'\u29F8': "BIG SOLIDUS",
	'\u29F9': "BIG REVERSE SOLIDUS",
	'\u1735': "PHILIPPINE SINGLE PUNCTUATION",
	'\u3033': "VERTICAL KANA REPEAT MARK UPPER HALF",
}

// checkLookalikes refuses a path a person or another program could read
// as a different path from the one the kernel will open: invalid UTF-8
// and U+FFFD (what a decoder makes of it, or of a lone surrogate),
// control characters, format characters (the bidi controls U+202A–202E
// and U+2066–2069, the zero-width U+200B–200D, U+2060 and U+FEFF, soft
// hyphen …: all of Unicode's Cf), anything NFKC would change (fullwidth
// ．．／, ligatures, compatibility digits, …), confusable separators, a
// leading "~" (servers expand it to a home directory; the kernel does
// not) and a URI (file:///srv/x: a server may open what it names, the
// kernel a directory called "file:"). The reason names the character and
// its offset.
func checkLookalikes(p string) error {
	if !utf8.ValidString(p) {
		return fmt.Errorf("is not valid UTF-8")
	}
	if strings.HasPrefix(p, "~") {
		return fmt.Errorf("starts with \"~\", which a server may expand to a home directory and the kernel does not; give the path in full")
	}
	if isURI(p) {
		return fmt.Errorf("is a URI (%s…), which a server may read as the path it names and the kernel as a relative name; give the path itself", clip(p))
	}
	for i, c := range p {
		if why := lookalike(c); why != "" {
			return fmt.Errorf("holds %s (U+%04X) at byte %d; a path must read as what it opens", why, c, i)
		}
	}
	if !norm.NFKC.IsNormalString(p) {
		at := firstNonNFKC(p)
		return fmt.Errorf("changes under Unicode NFKC normalisation (from byte %d: %q becomes %q); a look-alike of another path is refused",
			at, clip(p[at:]), clip(norm.NFKC.String(p[at:])))
	}
	return nil
}

// isURI reports whether p starts with a URI scheme and "//" (file:///x).
func isURI(p string) bool {
	scheme, _, ok := strings.Cut(p, "://")
	if !ok || scheme == "" || strings.ContainsRune(scheme, '/') {
		return false
	}
	for i, c := range scheme {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

func lookalike(c rune) string {
	switch {
	case c == utf8.RuneError:
		return "the replacement character (an invalid byte or lone surrogate decoded)"
	case unicode.Is(unicode.Cc, c):
		return "a control character"
	case unicode.Is(unicode.Cf, c):
		return "an invisible format character (bidi control, zero-width, …)"
	}
	return confusableSeparators[c]
}

// firstNonNFKC is where p stops being in NFKC form (a segment boundary,
// so a base letter and its combining marks are shown together).
func firstNonNFKC(p string) int { return norm.NFKC.QuickSpanString(p) }

func clip(s string) string {
	if len(s) > 24 {
		s = s[:24]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		return s + "…"
	}
	return s
}
