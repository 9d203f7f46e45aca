// Package manifest is the operator's tool manifest: what each tool call
// an agent makes through a gateway or a client hook is — its kind, risk
// and reversibility, the concepts it touches (fixed, or derived from its
// arguments, paths canonicalised first), the propositions it relies on,
// who confirms it — matched by the tool's SERVER/TOOL name, first rule
// first. The agent declares nothing: Describe reads the call, Call.Request
// turns what it found into the gate's request. See docs/manifest.md.
package manifest

import "github.com/ewp-go/ewp/gate"

// Bounds of a manifest, checked by Parse (and by the schema where it can
// say them). Each is far above a real manifest and keeps a hostile or
// generated one from making every call slow.
const (
	MaxManifestBytes  = 1 << 20
	MaxRules          = 1024
	MaxPatternBytes   = 256 // a rule's match
	MaxSelectorBytes  = 1024
	MaxTemplateBytes  = 1024
	MaxListPerRule    = 64 // concepts, derivations' concepts, paths, propositions, redactions of one rule
	MaxRoots          = 1024
	MaxRedactions     = 64
	MaxNameBytes      = gate.MaxNameBytes // a call's SERVER/TOOL: the bound of a recorded tool_name
	MaxIDBytes        = 256               // a kind or concept name (mcp.MaxIDBytes)
	MaxConcepts       = 64                // concepts of one call, fixed and derived (mcp.MaxConcepts)
	MaxPropositions   = 64                // propositions of one call, templates expanded
	MaxPropositionLen = 8192
	MaxPathsPerCall   = 256 // path values resolved for one call
)

// Confirmers.
const (
	ConfirmOperator = "operator"
	ConfirmUser     = "user"
)

// Defaults for a call no rule matches.
const (
	DefaultDeny    = "deny"
	DefaultConfirm = "confirm"
	// DefaultRule is Call.Rule of a call no rule matched.
	DefaultRule = "default"
	// UnlistedKind is the kind of such a call: it is judged as high-risk
	// and irreversible, so the gate asks for a confirmation at least.
	UnlistedKind = "unlisted"
)

// Manifest is a parsed manifest. It is immutable and safe for concurrent
// use.
type Manifest struct {
	rules  []*rule
	deflt  string
	roots  map[string]string
	redact []pointer
	res    resolver
}

// Options are what Parse cannot read from the manifest itself.
type Options struct {
	// FS resolves paths; nil is the real filesystem (OSFS).
	FS FS
	// Roots adds or overrides manifest roots: per server, the absolute
	// directory its relative paths are resolved against (e.g. the
	// working directory a gateway starts a stdio server in).
	Roots map[string]string
}

// rule is one parsed entry of tools.
type rule struct {
	at          string // its pointer, /tools/3
	match       string
	server      string // glob of the SERVER part (no '/')
	tool        string // glob of the TOOL part
	deny        bool
	kind, risk  string
	reversible  bool
	cardinality string
	concepts    []string
	derive      []derivation
	paths       []pointer // every path selector: derivations' under arguments and paths
	props       []template
	minDepth    *int
	confirm     string
	redact      []pointer
}

// derivation adds concepts when arg's value (or each of its strings) is
// under a directory or matches a glob.
type derivation struct {
	at       string
	arg      pointer
	under    string // absolute, clean; "" for a glob
	matches  string
	concepts []string
}

// Permits reports whether some rule could permit a call to name
// (SERVER/TOOL): tools/list shows only those. The first rule whose match
// fits decides; a deny rule, or no rule under default deny, hides it.
func (m *Manifest) Permits(name string) bool {
	if r := m.find(name); r != nil {
		return !r.deny
	}
	return m.deflt == DefaultConfirm
}

// Default is "deny" or "confirm".
func (m *Manifest) Default() string { return m.deflt }

// find is the first rule that matches name, or nil.
func (m *Manifest) find(name string) *rule {
	server, tool, ok := splitName(name)
	if !ok {
		return nil
	}
	for _, r := range m.rules {
		if glob(r.server, server) && glob(r.tool, tool) {
			return r
		}
	}
	return nil
}
