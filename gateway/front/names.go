package front

import "strings"

// Sep joins a downstream server's name and its tool's name in the name
// the agent sees: SERVER__TOOL. A server name never contains it (the
// config's schema refuses one that does), so the first Sep splits.
const Sep = "__"

// Exposed is the name the agent sees for tool on server.
func Exposed(server, tool string) string { return server + Sep + tool }

// Split is Exposed's inverse; ok is false for a name without Sep or with
// an empty half.
func Split(exposed string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(exposed, Sep)
	return server, tool, ok && server != "" && tool != ""
}

// ManifestName is the name the operator's manifest matches: SERVER/TOOL.
func ManifestName(server, tool string) string { return server + "/" + tool }
