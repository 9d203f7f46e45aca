package snapshot

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
)

// Fold is the case folding of text search in every store: Unicode full
// case folding (golang.org/x/text/cases.Fold, so "STRASSE" finds "Straße"
// and "ΩMEGA" finds "ωmega"), applied alike to the query and to what is
// searched. It maps character by character, so a folded query contained
// in a folded text is the "contains, case-insensitively" a person means.
// ASCII, the usual case, takes a path that allocates only when there is an
// upper-case letter.
func Fold(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return cases.Fold().String(s)
		}
	}
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
