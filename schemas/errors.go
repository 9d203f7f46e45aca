package schemas

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Problem is one way a document breaks a schema.
type Problem struct {
	// Pointer is the RFC 6901 JSON pointer of the offending value ("" is
	// the whole document). For a missing member it points at the member
	// that should be there, e.g. "/checks/0/result".
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "(document)"
	}
	return ptr + ": " + p.Message
}

// Error is a document that does not validate: every problem found, in
// document order of their pointers.
type Error struct {
	Schema   string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s schema: %s", e.Schema, e.Problems[0])
	if n := len(e.Problems) - 1; n > 0 {
		fmt.Fprintf(&b, " (and %d more)", n)
	}
	return b.String()
}

var printer = message.NewPrinter(language.English)

// convert flattens the library's tree of errors into its leaves, which
// are the actual problems; the inner nodes only say "a $ref failed".
func convert(name string, err error) error {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("schemas: %w", err)
	}
	out := &Error{Schema: name}
	leaves(ve, func(e *jsonschema.ValidationError) {
		out.Problems = append(out.Problems, problems(e)...)
	})
	if len(out.Problems) == 0 { // cannot happen for a failed validation; keep Error() safe
		out.Problems = []Problem{{Message: ve.Error()}}
	}
	sortProblems(out.Problems)
	out.Problems = slices.Compact(out.Problems)
	return out
}

func leaves(e *jsonschema.ValidationError, fn func(*jsonschema.ValidationError)) {
	if len(e.Causes) == 0 {
		fn(e)
		return
	}
	for _, c := range e.Causes {
		leaves(c, fn)
	}
}

// problems turns one leaf into problems. A missing member, or one the
// schema does not allow, is reported at its own pointer, as the kernel names "checks[0].result" and not
// "checks[0]", so the two locations can be compared.
func problems(e *jsonschema.ValidationError) []Problem {
	at := Pointer(e.InstanceLocation)
	if r, ok := e.ErrorKind.(*kind.Required); ok {
		out := make([]Problem, len(r.Missing))
		for i, m := range r.Missing {
			out[i] = Problem{Pointer: at + "/" + escapeToken(m), Message: "is required (present and not null)"}
		}
		return out
	}
	if a, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
		out := make([]Problem, len(a.Properties))
		for i, m := range a.Properties {
			out[i] = Problem{Pointer: at + "/" + escapeToken(m), Message: "is not allowed here: not a member this schema knows"}
		}
		return out
	}
	return []Problem{{Pointer: at, Message: describe(e)}}
}

// sortProblems orders by document position: tokens compare as numbers
// when both are array indexes, so "/checks/10" comes after "/checks/9".
func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		if c := compareTokens(strings.Split(a.Pointer, "/"), strings.Split(b.Pointer, "/")); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
}

func compareTokens(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] == b[i] {
			continue
		}
		x, errX := strconv.Atoi(a[i])
		y, errY := strconv.Atoi(b[i])
		if errX == nil && errY == nil {
			return x - y
		}
		return strings.Compare(a[i], b[i])
	}
	return len(a) - len(b)
}

// Pointer renders reference tokens as an RFC 6901 JSON pointer.
func Pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

func escapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}
