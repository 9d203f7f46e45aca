package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ewp-go/ewp/schemas"
)

// Keys are the members of a config that make up its manifest: a gateway
// hands Parse an object of those members of its config.
var Keys = []string{"tools", "default", "roots", "redact"}

// document is the manifest as JSON, after the schema checked its shape.
type document struct {
	Tools   []ruleDoc         `json:"tools"`
	Default string            `json:"default"`
	Roots   map[string]string `json:"roots"`
	Redact  []string          `json:"redact"`
}

type ruleDoc struct {
	Match        string            `json:"match"`
	Deny         bool              `json:"deny"`
	Kind         string            `json:"kind"`
	Risk         string            `json:"risk"`
	Reversible   bool              `json:"reversible"`
	Cardinality  string            `json:"cardinality"`
	Concepts     []json.RawMessage `json:"concepts"`
	Paths        []string          `json:"paths"`
	Propositions []string          `json:"propositions"`
	MinDepth     *int              `json:"min_depth"`
	Confirm      string            `json:"confirm"`
	Redact       []string          `json:"redact"`
}

type derivationDoc struct {
	Argument string   `json:"argument"`
	Under    string   `json:"under"`
	Matches  string   `json:"matches"`
	Concepts []string `json:"concepts"`
}

// Parse reads a manifest, {"tools": [...], "default": "deny"|"confirm",
// "roots": {...}, "redact": [...]}, against the real filesystem. Every
// error is an *Error naming the field (a JSON pointer) and the rule.
func Parse(raw []byte) (*Manifest, error) { return ParseWith(raw, Options{}) }

// ParseWith is Parse with the filesystem and roots of o.
func ParseWith(raw []byte, o Options) (*Manifest, error) {
	if len(raw) > MaxManifestBytes {
		return nil, &Error{Code: CodeLimitExceeded, Field: "", Reason: fmt.Sprintf("the manifest is %d bytes; at most %d are read", len(raw), MaxManifestBytes)}
	}
	generic, err := decodeArguments(raw)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Code, e.Field = CodeInvalidManifest, strings.TrimPrefix(e.Field, "/arguments")
			e.Reason = strings.ReplaceAll(e.Reason, "the arguments are", "the manifest is")
		}
		return nil, err
	}
	var doc document
	if err := validate(generic, &doc); err != nil {
		return nil, err
	}
	return build(doc, o)
}

// validate checks the schema, then decodes the document.
func validate(generic map[string]any, doc *document) error {
	if err := schemas.Validate(schemas.Manifest, generic); err != nil {
		var se *schemas.Error
		if !errors.As(err, &se) {
			return err
		}
		p := se.Problems[0]
		return &Error{Code: CodeInvalidManifest, Field: p.Pointer, Rule: ruleAt(generic, p.Pointer),
			Reason: p.Message, More: len(se.Problems) - 1}
	}
	if err := json.Unmarshal(canonical(generic), doc); err != nil {
		return manifestErr("", "does not decode after its schema passed: "+err.Error())
	}
	return nil
}

// ruleAt is the match pattern of the rule a pointer /tools/N/… falls in.
func ruleAt(generic map[string]any, ptr string) string {
	rest, ok := strings.CutPrefix(ptr, "/tools/")
	if !ok {
		return ""
	}
	idx, _, _ := strings.Cut(rest, "/")
	tools, _ := generic["tools"].([]any)
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 || i >= len(tools) {
		return ""
	}
	r, _ := tools[i].(map[string]any)
	m, _ := r["match"].(string)
	return m
}

func build(doc document, o Options) (*Manifest, error) {
	fsys := o.FS
	if fsys == nil {
		fsys = OSFS{}
	}
	m := &Manifest{deflt: doc.Default, res: resolver{fs: fsys}, roots: map[string]string{}}
	if m.deflt == "" {
		m.deflt = DefaultDeny
	}
	if len(doc.Tools) > MaxRules {
		return nil, limitErr("/tools", fmt.Sprintf("has %d rules; at most %d", len(doc.Tools), MaxRules))
	}
	if err := m.addRoots(doc.Roots, o.Roots); err != nil {
		return nil, err
	}
	var err error
	if m.redact, err = selectors("/redact", "", doc.Redact, MaxRedactions); err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for i, rd := range doc.Tools {
		r, err := buildRule(fmt.Sprintf("/tools/%d", i), rd)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[r.match]; dup {
			return nil, &Error{Code: CodeInvalidManifest, Field: r.at + "/match", Rule: r.match,
				Reason: fmt.Sprintf("repeats the match of /tools/%d, which wins first: this rule would never apply", j)}
		}
		seen[r.match] = i
		m.rules = append(m.rules, r)
	}
	return m, nil
}

func (m *Manifest) addRoots(fromDoc, fromOpts map[string]string) error {
	if len(fromDoc)+len(fromOpts) > MaxRoots {
		return limitErr("/roots", fmt.Sprintf("names more than %d servers", MaxRoots))
	}
	for _, src := range []map[string]string{fromDoc, fromOpts} {
		for server, dir := range src {
			field := "/roots/" + escapeToken(server)
			if server == "" || strings.ContainsAny(server, "/*?") {
				return manifestErr(field, "must be a server's name (no \"/\", \"*\" or \"?\")")
			}
			if err := absoluteDir(dir); err != nil {
				return manifestErr(field, err.Error())
			}
			m.roots[server] = dir
		}
	}
	return nil
}

// absoluteDir refuses a directory of the manifest that is not absolute,
// not clean, or a look-alike: it is compared as written (and resolved).
func absoluteDir(dir string) error {
	if !strings.HasPrefix(dir, "/") {
		return fmt.Errorf("must be an absolute path; got %q", dir)
	}
	if len(dir) > MaxPathBytes {
		return ErrPathTooLong
	}
	if err := checkLookalikes(dir); err != nil {
		return err
	}
	if lexical(dir) != dir {
		return fmt.Errorf("must be written clean (no \".\", \"..\", \"//\" or trailing \"/\"): %q", lexical(dir))
	}
	return nil
}

func buildRule(at string, rd ruleDoc) (*rule, error) {
	r := &rule{at: at, match: rd.Match, deny: rd.Deny, kind: rd.Kind, risk: rd.Risk, reversible: rd.Reversible,
		cardinality: rd.Cardinality, minDepth: rd.MinDepth, confirm: rd.Confirm}
	fail := func(field, reason string) error {
		return &Error{Code: CodeInvalidManifest, Field: at + field, Rule: rd.Match, Reason: reason}
	}
	var ok bool
	if r.server, r.tool, ok = splitName(rd.Match); !ok {
		return nil, fail("/match", "must be SERVER/TOOL with both parts non-empty; got "+quote(rd.Match))
	}
	if len(rd.Match) > MaxPatternBytes {
		return nil, &Error{Code: CodeLimitExceeded, Field: at + "/match", Rule: rd.Match, Reason: fmt.Sprintf("is longer than %d bytes", MaxPatternBytes)}
	}
	if r.confirm == "" {
		r.confirm = ConfirmOperator
	}
	if r.deny {
		return r, nil
	}
	if len(r.kind) > MaxIDBytes {
		return nil, &Error{Code: CodeLimitExceeded, Field: at + "/kind", Rule: rd.Match, Reason: fmt.Sprintf("is longer than %d bytes", MaxIDBytes)}
	}
	if err := r.buildLists(rd, fail); err != nil {
		return nil, err
	}
	return r, nil
}

// buildLists reads concepts, derivations, paths, propositions, redact.
func (r *rule) buildLists(rd ruleDoc, fail func(field, reason string) error) error {
	if err := r.buildConcepts(rd.Concepts, fail); err != nil {
		return err
	}
	extra, err := selectors(r.at+"/paths", r.match, rd.Paths, MaxListPerRule)
	if err != nil {
		return err
	}
	for _, p := range extra {
		r.addPath(p)
	}
	for i, text := range rd.Propositions {
		if len(text) > MaxTemplateBytes {
			return &Error{Code: CodeLimitExceeded, Field: fmt.Sprintf("%s/propositions/%d", r.at, i), Rule: r.match,
				Reason: fmt.Sprintf("is longer than %d bytes", MaxTemplateBytes)}
		}
		t, err := parseTemplate(text)
		if err != nil {
			return fail(fmt.Sprintf("/propositions/%d", i), err.Error())
		}
		t.at = fmt.Sprintf("%s/propositions/%d", r.at, i)
		r.props = append(r.props, t)
	}
	r.redact, err = selectors(r.at+"/redact", r.match, rd.Redact, MaxListPerRule)
	return err
}

func (r *rule) buildConcepts(items []json.RawMessage, fail func(field, reason string) error) error {
	for i, raw := range items {
		field := fmt.Sprintf("/concepts/%d", i)
		var name string
		if json.Unmarshal(raw, &name) == nil {
			if err := conceptNames(r, func(int) string { return field }, []string{name}); err != nil {
				return err
			}
			r.concepts = appendNew(r.concepts, name)
			continue
		}
		var dd derivationDoc
		if err := json.Unmarshal(raw, &dd); err != nil {
			return fail(field, "must be a concept name or a derivation object")
		}
		if err := conceptNames(r, func(j int) string { return fmt.Sprintf("%s/concepts/%d", field, j) }, dd.Concepts); err != nil {
			return err
		}
		if len(dd.Matches) > MaxPatternBytes {
			return &Error{Code: CodeLimitExceeded, Field: r.at + field + "/matches", Rule: r.match, Reason: fmt.Sprintf("is longer than %d bytes", MaxPatternBytes)}
		}
		d := derivation{at: r.at + field, under: dd.Under, matches: dd.Matches, concepts: dd.Concepts}
		var ok bool
		if d.arg, ok = parsePointer(dd.Argument); !ok {
			return fail(field+"/argument", "must be an argument name or a JSON pointer (RFC 6901); got "+quote(dd.Argument))
		}
		if d.under != "" {
			if err := absoluteDir(d.under); err != nil {
				return fail(field+"/under", err.Error())
			}
			r.addPath(d.arg)
		}
		r.derive = append(r.derive, d)
	}
	return nil
}

// conceptNames bounds concept names in bytes (the schema counts
// characters): each is recorded, and mcp bounds a recorded concept so.
// fieldOf is the pointer of the i-th name.
func conceptNames(r *rule, fieldOf func(i int) string, names []string) error {
	for i, n := range names {
		if len(n) > MaxIDBytes {
			return &Error{Code: CodeLimitExceeded, Field: r.at + fieldOf(i), Rule: r.match, Reason: fmt.Sprintf("is longer than %d bytes", MaxIDBytes)}
		}
	}
	return nil
}

func (r *rule) addPath(p pointer) {
	for _, q := range r.paths {
		if slices.Equal(p, q) {
			return
		}
	}
	r.paths = append(r.paths, p)
}

// selectors parses a list of argument selectors.
func selectors(at, match string, sels []string, limit int) ([]pointer, error) {
	if len(sels) > limit {
		return nil, &Error{Code: CodeLimitExceeded, Field: at, Rule: match, Reason: fmt.Sprintf("has %d entries; at most %d", len(sels), limit)}
	}
	out := make([]pointer, 0, len(sels))
	for i, s := range sels {
		if len(s) > MaxSelectorBytes {
			return nil, &Error{Code: CodeLimitExceeded, Field: fmt.Sprintf("%s/%d", at, i), Rule: match,
				Reason: fmt.Sprintf("is longer than %d bytes", MaxSelectorBytes)}
		}
		p, ok := parsePointer(s)
		if !ok {
			return nil, &Error{Code: CodeInvalidManifest, Field: fmt.Sprintf("%s/%d", at, i), Rule: match,
				Reason: "must be an argument name or a JSON pointer (RFC 6901); got " + quote(s)}
		}
		out = append(out, p)
	}
	return out, nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func quote(s string) string { return strconv.Quote(s) }

func itoa(i int) string { return strconv.Itoa(i) }
