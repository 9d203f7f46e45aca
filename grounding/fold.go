package grounding

import (
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// folder is stateless and safe for concurrent use (x/text/cases docs), so
// sharing one value does not make the package impure.
var folder = cases.Fold()

// Fold is the name key used for every lookup and uniqueness check: Unicode
// full case folding after NFC, which matches Python's
// unicodedata.normalize("NFC", s).casefold() (spec §1.7).
func Fold(name string) string {
	if isASCII(name) {
		// ASCII is already NFC and its full case fold is plain lowering;
		// the fast path keeps Check cheap on large graphs.
		return asciiLower(name)
	}
	return folder.String(norm.NFC.String(name))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
