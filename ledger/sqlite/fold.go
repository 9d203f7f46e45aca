package sqlite

import "github.com/ewp-go/ewp/snapshot"

// fold is the case folding of search, snapshot.Fold (Unicode full case
// folding), shared with the PostgreSQL ledger so both stores find the same.
func fold(s string) string { return snapshot.Fold(s) }

// searchText is what the search index holds for an assertion text.
func searchText(text string, folded bool) string {
	if folded {
		return fold(text)
	}
	return text
}
