package ledger

import (
	"strings"

	"golang.org/x/text/cases"
)

// fold is the case folding of search: Unicode full case folding
// (golang.org/x/text/cases.Fold, so "STRASSE" finds "Straße" and "ΩMEGA"
// finds "ωmega"), applied alike to the query and to what is searched. It
// maps character by character, so a folded query contained in a folded
// text is the "contains, case-insensitively" a person means. ASCII, the
// usual case, takes a path of its own that allocates only when there is
// an upper-case letter.
func fold(s string) string {
	if !isASCII(s) {
		return cases.Fold().String(s)
	}
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// searchText is what the search index holds for an assertion text.
func searchText(text string, folded bool) string {
	if folded {
		return fold(text)
	}
	return text
}
