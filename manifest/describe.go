package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ewp-go/ewp/gate"
)

// Call is what the manifest says a tool call is.
type Call struct {
	// Name is the call's SERVER/TOOL; Rule is the match pattern of the rule
	// that described it, or DefaultRule.
	Name, Rule  string
	Kind, Risk  string
	Reversible  bool
	Cardinality string   // "" when the rule does not say
	Concepts    []string // fixed, then derived, each once
	// Propositions are the ids the action relies on, templates expanded;
	// the first is the request's PropositionID.
	Propositions []string
	MinDepth     *int
	ConfirmBy    string // ConfirmOperator or ConfirmUser
	// Arguments is the canonical JSON of the arguments (sorted keys,
	// numbers as sent): what the gate hashes, and what a gateway should
	// forward, so what was judged is what runs. Recorded is it with the
	// manifest's redactions, for the decision log.
	Arguments, Recorded json.RawMessage
	// Deny: the call is refused without asking the gate (a deny rule, or
	// no rule under default deny). Kind is then UnlistedKind or "denied",
	// Risk high and Reversible false, so a request built from it anyway
	// is never judged lightly.
	Deny bool

	args map[string]any // the decoded arguments, for the guard
}

// Describe is what the call name(args) is, per the first rule whose match
// fits name; relative paths resolve against the server's configured root.
// An error is an *Error naming the argument at fault.
func (m *Manifest) Describe(name string, args json.RawMessage) (*Call, error) {
	return m.DescribeIn(name, args, "")
}

// DescribeIn is Describe with root, when not "", as the directory the
// call's relative paths resolve against (it wins over the configured
// root): a client hook knows the session's working directory (Claude
// Code's hook input has cwd).
func (m *Manifest) DescribeIn(name string, args json.RawMessage, root string) (*Call, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	r := m.find(name)
	c, err := m.describe(name, args, root, r)
	var e *Error
	if errors.As(err, &e) && e.Rule == "" {
		e.Rule = DefaultRule
		if r != nil {
			e.Rule = r.match
		}
	}
	return c, err
}

// describe is what the call is under r (nil: no rule matched).
func (m *Manifest) describe(name string, args json.RawMessage, root string, r *rule) (*Call, error) {
	decoded, err := decodeArguments(args)
	if err != nil {
		return nil, err
	}
	c := &Call{Name: name, Arguments: canonical(decoded), args: decoded}
	if r == nil || r.deny {
		m.refused(c, r)
		return c, nil
	}
	if root == "" {
		root = m.roots[serverOf(name)]
	} else if err := absoluteDir(root); err != nil {
		return nil, &Error{Code: CodeInvalidArgument, Field: "/root", Reason: err.Error()}
	}
	budget := MaxLookupsPerCall
	d := describer{m: m, r: r, args: decoded, root: root, server: serverOf(name), canon: map[string][]resolved{},
		res: resolver{fs: m.res.fs, budget: &budget}}
	if err := d.fill(c); err != nil {
		return nil, err
	}
	return c, nil
}

// refused fills a call that is not asked about: matched by a deny rule r,
// or by none (r nil) under default deny or confirm.
func (m *Manifest) refused(c *Call, r *rule) {
	c.Risk, c.Reversible, c.ConfirmBy = "high", false, ConfirmOperator
	c.Recorded = c.Arguments // the same encoding, unless a value is redacted
	if len(m.redact) > 0 {
		c.Recorded = canonical(redact(c.args, m.redact))
	}
	if r != nil {
		c.Rule, c.Kind, c.Deny = r.match, "denied", true
		return
	}
	c.Rule, c.Kind, c.Deny = DefaultRule, UnlistedKind, m.deflt != DefaultConfirm
}

// checkName refuses a name that is not SERVER/TOOL as the manifest
// matches it: bounded, valid UTF-8, no control or format characters.
func checkName(name string) error {
	bad := func(reason string) error { return argErr("/name", reason) }
	switch {
	case len(name) > MaxNameBytes:
		return &Error{Code: CodeLimitExceeded, Field: "/name", Reason: fmt.Sprintf("is %d bytes; at most %d", len(name), MaxNameBytes)}
	case !utf8.ValidString(name):
		return bad("is not valid UTF-8")
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) >= 0:
		return bad("holds a control or invisible character")
	}
	if _, _, ok := splitName(name); !ok {
		return bad("must be SERVER/TOOL with both parts non-empty; got " + quote(name))
	}
	return nil
}

func serverOf(name string) string {
	s, _, _ := strings.Cut(name, "/")
	return s
}

// describer fills one call from its rule.
type describer struct {
	m      *Manifest
	r      *rule
	args   map[string]any
	root   string
	server string
	canon  map[string][]resolved // per path selector, its values resolved
	dirs   map[string]resolved   // per derivation directory, resolved
	res    resolver              // the manifest's, with this call's budget
	paths  int                   // path values resolved so far
}

// resolved is one path argument's value, read both ways (see within).
type resolved struct{ kernel, lexical string }

func (d *describer) fill(c *Call) error {
	r := d.r
	c.Rule, c.Kind, c.Risk, c.Reversible = r.match, r.kind, r.risk, r.reversible
	c.Cardinality, c.ConfirmBy = r.cardinality, r.confirm
	if r.minDepth != nil {
		n := *r.minDepth // the call's own: a caller may change it
		c.MinDepth = &n
	}
	for _, p := range r.paths {
		if _, err := d.pathValues(p); err != nil {
			return err
		}
	}
	var err error
	if c.Concepts, err = d.concepts(); err != nil {
		return err
	}
	if c.Propositions, err = d.propositions(); err != nil {
		return err
	}
	c.Recorded = c.Arguments // the same encoding, unless a value is redacted
	if len(d.m.redact)+len(r.redact) > 0 {
		c.Recorded = canonical(redact(d.args, append(append([]pointer{}, d.m.redact...), r.redact...)))
	}
	return nil
}

// concepts is the rule's fixed concepts, then those its derivations add.
func (d *describer) concepts() ([]string, error) {
	out := append([]string{}, d.r.concepts...)
	for _, dv := range d.r.derive {
		hit, err := d.derives(dv)
		if err != nil {
			return nil, err
		}
		if !hit {
			continue
		}
		for _, c := range dv.concepts {
			out = appendNew(out, c)
		}
	}
	if len(out) > MaxConcepts {
		return nil, limitErr("/concepts", fmt.Sprintf("the call has %d concepts; at most %d", len(out), MaxConcepts))
	}
	return out, nil
}

// derives reports whether dv applies: some value of its argument is under
// its directory (either reading of either path) or matches its glob. An
// absent argument derives nothing.
func (d *describer) derives(dv derivation) (bool, error) {
	if dv.under != "" {
		vals, err := d.pathValues(dv.arg)
		if err != nil || len(vals) == 0 {
			return false, err
		}
		dir, err := d.resolveDir(dv)
		if err != nil {
			return false, err
		}
		for _, v := range vals {
			if v.under(dir) {
				return true, nil
			}
		}
		return false, nil
	}
	v, ok := dv.arg.lookup(d.args)
	if !ok {
		return false, nil
	}
	texts, err := stringList(dv.arg, v)
	if err != nil {
		return false, err
	}
	for _, s := range texts {
		if glob(dv.matches, s) {
			return true, nil
		}
	}
	return false, nil
}

// under reports whether either reading of the path is in either reading
// of the directory: a rule holds however a server reads the path.
func (v resolved) under(dir resolved) bool {
	for _, p := range []string{v.kernel, v.lexical} {
		if within(p, dir.kernel) || within(p, dir.lexical) {
			return true
		}
	}
	return false
}

// resolveDir resolves a derivation's directory at the call, so a rule
// holds when the directory is (or sits behind) a symbolic link. One the
// kernel cannot resolve refuses the call: the rule could not be judged.
// Each directory is resolved once per call, however many derivations
// name it.
func (d *describer) resolveDir(dv derivation) (resolved, error) {
	if dir, ok := d.dirs[dv.under]; ok {
		return dir, nil
	}
	k, err := d.res.resolve(dv.under)
	if err != nil {
		return resolved{}, &Error{Code: CodeUnsafePath, Field: dv.at + "/under",
			Reason: fmt.Sprintf("the manifest's directory %q cannot be resolved: %v", dv.under, err)}
	}
	if d.dirs == nil {
		d.dirs = map[string]resolved{}
	}
	d.dirs[dv.under] = resolved{kernel: k, lexical: dv.under}
	return d.dirs[dv.under], nil
}

// propositions expands the rule's templates, each id once, none empty.
func (d *describer) propositions() ([]string, error) {
	var out []string
	for _, t := range d.r.props {
		ids, err := t.expand(d.placeholder, MaxPropositions)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if strings.TrimSpace(id) == "" {
				return nil, argErr(t.at, "makes an empty proposition id from this call")
			}
			if len(id) > MaxPropositionLen {
				return nil, limitErr(t.at, fmt.Sprintf("makes a proposition id of %d bytes; at most %d", len(id), MaxPropositionLen))
			}
			out = appendNew(out, id)
		}
		if len(out) > MaxPropositions {
			return nil, limitErr(t.at, fmt.Sprintf("the call relies on more than %d propositions", MaxPropositions))
		}
	}
	return out, nil
}

// placeholder is what a template's selector stands for: the canonical
// (kernel-resolved) paths of a path argument, the text of another.
func (d *describer) placeholder(p pointer) ([]string, error) {
	if d.r.isPath(p) {
		vals, err := d.pathValues(p)
		if err != nil {
			return nil, err
		}
		if len(vals) == 0 {
			return nil, argErr(p.String(), "is required: a proposition of this rule is built from it")
		}
		out := make([]string, len(vals))
		for i, v := range vals {
			out[i] = v.kernel
		}
		return out, nil
	}
	v, ok := p.lookup(d.args)
	return scalarTexts(p, v, ok)
}

func (r *rule) isPath(p pointer) bool {
	return slices.ContainsFunc(r.paths, func(q pointer) bool { return slices.Equal(p, q) })
}

// pathValues resolves, once per call, the path(s) selector p names: a
// string or a list of strings; none when absent.
func (d *describer) pathValues(p pointer) ([]resolved, error) {
	key := p.String()
	if vals, ok := d.canon[key]; ok {
		return vals, nil
	}
	v, ok := p.lookup(d.args)
	if !ok {
		d.canon[key] = nil
		return nil, nil
	}
	texts, err := stringList(p, v)
	if err != nil {
		return nil, err
	}
	if d.paths += len(texts); d.paths > MaxPathsPerCall {
		return nil, limitErr(key, fmt.Sprintf("the call names more than %d paths", MaxPathsPerCall))
	}
	out := make([]resolved, 0, len(texts))
	for i, s := range texts {
		field := key
		if _, isList := v.([]any); isList {
			field = fmt.Sprintf("%s/%d", key, i)
		}
		rv, err := d.resolvePath(field, s)
		if err != nil {
			return nil, err
		}
		out = append(out, rv)
	}
	d.canon[key] = out
	return out, nil
}

// resolvePath canonicalises one path argument: look-alikes refused, a
// relative path joined to the root, then resolved as the kernel would.
func (d *describer) resolvePath(field, s string) (resolved, error) {
	unsafe := func(reason string) error { return &Error{Code: CodeUnsafePath, Field: field, Reason: reason} }
	if s == "" {
		return resolved{}, argErr(field, "must be a non-empty path")
	}
	if len(s) > MaxPathBytes {
		return resolved{}, limitErr(field, fmt.Sprintf("is %d bytes; a path is at most %d", len(s), MaxPathBytes))
	}
	if err := checkLookalikes(s); err != nil {
		return resolved{}, unsafe(err.Error())
	}
	abs := s
	if !strings.HasPrefix(s, "/") {
		if d.root == "" {
			return resolved{}, unsafe(fmt.Sprintf("is relative and no root is configured for server %q (roots.%s in the manifest)", d.server, d.server))
		}
		abs = d.root + "/" + s
	}
	k, err := d.res.resolve(abs)
	if errors.Is(err, ErrTooMuchWork) || errors.Is(err, ErrPathTooLong) {
		return resolved{}, limitErr(field, err.Error())
	}
	if err != nil {
		return resolved{}, unsafe("cannot be resolved as the kernel would: " + err.Error())
	}
	return resolved{kernel: k, lexical: lexical(abs)}, nil
}

// stringList is a string value, or a list of strings, as a list.
func stringList(p pointer, v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case []any:
		out := make([]string, 0, len(x))
		for i, item := range x {
			s, ok := item.(string)
			if !ok {
				return nil, argErr(fmt.Sprintf("%s/%d", p, i), "must be a string (this rule reads each value of the list)")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, argErr(p.String(), "must be a string or a list of strings (this rule reads it)")
}

// RedactedMarker replaces a redacted value in Recorded: the gate's
// marker, so a call redacted here reads as one the gate redacted.
const RedactedMarker = gate.RedactedMarker

func redact(args map[string]any, ptrs []pointer) any {
	var v any = args
	for _, p := range ptrs {
		v = p.replace(v, RedactedMarker)
	}
	return v
}
