package manifest

import (
	"strings"
	"unicode/utf8"
)

// splitName splits SERVER/TOOL at its first "/": a server's name has no
// "/", a tool's may. ok is false when either part is empty.
func splitName(name string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(name, "/")
	return server, tool, ok && server != "" && tool != ""
}

// glob reports whether s matches pat, where "*" matches any run of
// characters (none too) and "?" exactly one; every other character
// stands for itself (no classes, no escapes: a tool name has neither).
// The iterative form backtracks only to the last star, so a match costs
// at most len(pat)·len(s) steps, both bounded.
func glob(pat, s string) bool {
	var px, sx int
	starP, starS := -1, -1
	for sx < len(s) {
		if px < len(pat) {
			switch pat[px] {
			case '*':
				starP, starS = px, sx
				px++
				continue
			case '?':
				_, n := utf8.DecodeRuneInString(s[sx:])
				px, sx = px+1, sx+n
				continue
			default:
				if pat[px] == s[sx] {
					px, sx = px+1, sx+1
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		_, n := utf8.DecodeRuneInString(s[starS:])
		starS += n
		px, sx = starP+1, starS
	}
	for px < len(pat) && pat[px] == '*' {
		px++
	}
	return px == len(pat)
}
