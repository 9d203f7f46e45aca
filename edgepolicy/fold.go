package edgepolicy

import (
	"fmt"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// folder is safe for concurrent use: cases.Fold is documented as stateless.
var folder = cases.Fold()

// fold is the concept-name key of the grounding spec (§1.7): Unicode full case
// folding after NFC, so "Straße"/"STRASSE" and precomposed/decomposed "é"
// name the same primitive.
func fold(name string) string {
	return folder.String(norm.NFC.String(name))
}

// depthNames are the DepthLevel names of the grounding spec (§1.1).
var depthNames = [...]string{"EXISTENCE", "IDENTITY", "CAPABILITIES", "CONSTRAINTS", "IMPLICATIONS"}

// DepthLabel renders a depth level the way the grounding messages do,
// e.g. "D3 CONSTRAINTS". Levels outside 0..4 cannot come from a loaded Set
// but are rendered as "D<n>" rather than panicking.
func DepthLabel(level int) string {
	if level < 0 || level >= len(depthNames) {
		return fmt.Sprintf("D%d", level)
	}
	return fmt.Sprintf("D%d %s", level, depthNames[level])
}
