// Package consolelink builds links to the operator console's pages for
// the code that names them without serving them (the client hooks, the
// gateway), so every entrance points at a page the console answers. It
// imports nothing of the console: a hook binary need not link the
// console to print a link to it. The console builds its own links here
// too, and its tests request what this package builds.
package consolelink

import (
	"net/url"
	"strings"
)

// Decision is the page of decision id under the console at base (its
// root, e.g. "http://127.0.0.1:8765/console/" or "/console/"):
// BASE/decision?id=ID, the id query-escaped. "" when base or id is "".
func Decision(base, id string) string {
	if base == "" || id == "" {
		return ""
	}
	return strings.TrimSuffix(base, "/") + "/decision?id=" + url.QueryEscape(id)
}
