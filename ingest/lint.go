package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ewp-go/ewp/schemas"
	"github.com/ewp-go/ewp/warrant"
)

// Codes of what ingest finds suspicious in a view the kernel accepts. The
// protocol lets a view carry members it does not name and be empty, so
// these are warnings; --strict (Options.Strict) refuses such views
// instead. They are ingest's own, not the kernel's: a stored snapshot is
// immutable, and only ingest can stop a typo before it becomes one.
const (
	CodeUnknownKey = "EWP_INGEST_UNKNOWN_KEY"
	CodeEmptyView  = "EWP_INGEST_EMPTY_VIEW"
)

// lint returns the warnings about one accepted view: every member the
// published document schema does not name (with the known key nearest to
// it), and a view that holds no records at all.
func lint(file string, it Item, v *warrant.View) []Refusal {
	var out []Refusal
	at := func(line int, code, pointer, rule string) Refusal {
		r := Refusal{File: file, Line: line, Code: code, Pointer: pointer, Rule: rule}
		if it.Index >= 0 {
			idx := it.Index
			r.Index = &idx
		}
		return r
	}
	for _, u := range unknownMembers(it.Raw) {
		rule := fmt.Sprintf("unknown key %q", u.Key)
		if u.Nearest != "" {
			rule += fmt.Sprintf(" (did you mean %q?)", u.Nearest)
		}
		rule += "; the protocol ignores it, so what it holds has no effect on the warrant"
		out = append(out, at(keyLine(it, u.Key), CodeUnknownKey, u.Pointer, rule))
	}
	if isEmpty(v) {
		out = append(out, at(it.Line, CodeEmptyView, "", fmt.Sprintf(
			"the view of %q holds no assertions, evidence, checks, conflicts or lineage; its proposition reads UNACCEPTED and INSUFFICIENT", v.PropositionID)))
	}
	return out
}

// unknownMembers decodes raw again, with numbers kept as text (a value
// past float64's range is the kernel's business, not a reason to skip
// the check), and walks it against the schema. A view the kernel accepted
// is always JSON, so an error here finds nothing rather than failing.
func unknownMembers(raw []byte) []schemas.Unknown {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return nil
	}
	u, err := schemas.UnknownMembers(doc)
	if err != nil {
		return nil
	}
	return u
}

func isEmpty(v *warrant.View) bool {
	return len(v.Assertions)+len(v.Evidence)+len(v.Checks)+len(v.Conflicts)+len(v.Lineage) == 0
}

// keyLine is the input line of the first member named key in the item
// (the item's first line when the name is written with escapes): close
// enough to find it, with the pointer saying exactly where it is.
func keyLine(it Item, key string) int {
	quoted, _ := json.Marshal(key)
	rest, off := it.Raw, 0
	for {
		i := bytes.Index(rest, quoted)
		if i < 0 {
			return it.Line
		}
		after := bytes.TrimLeft(rest[i+len(quoted):], " \t\r\n")
		if len(after) > 0 && after[0] == ':' {
			return it.Line + bytes.Count(it.Raw[:off+i], []byte("\n"))
		}
		rest, off = rest[i+len(quoted):], off+i+len(quoted)
	}
}

// strictRefusal turns a view's warnings into the one refusal --strict
// makes of them, naming each.
func strictRefusal(warns []Refusal) *warrant.Error {
	rules := make([]string, len(warns))
	for i, w := range warns {
		rules[i] = w.Rule
		if w.Pointer != "" {
			rules[i] = w.Pointer + ": " + w.Rule
		}
	}
	return &warrant.Error{Code: warns[0].Code, Rule: strings.Join(rules, "; ") + " (--strict refuses such views; fix the view, or load without --strict to store it with a warning)"}
}

// WarningString is how a warning prints: where, then the code and rule.
func (r Refusal) WarningString() string {
	loc := r.File
	if r.Index != nil {
		loc += fmt.Sprintf(": [%d]", *r.Index)
	}
	if r.Line > 0 {
		loc += fmt.Sprintf(": line %d", r.Line)
	}
	if r.Pointer != "" {
		return fmt.Sprintf("%s: warning: %s: %s: %s", loc, r.Code, r.Pointer, r.Rule)
	}
	return fmt.Sprintf("%s: warning: %s: %s", loc, r.Code, r.Rule)
}
