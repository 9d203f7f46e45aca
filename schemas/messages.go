package schemas

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// anyButNull is the type list of an id/text/timestamp field.
var anyButNull = []string{"array", "boolean", "number", "object", "string"}

// describe words a leaf the way the kernel words its refusals ("must be a
// list of non-empty strings, not a string"), so a person reading both sees
// one voice. Kinds these schemas do not use fall back to the library.
func describe(e *jsonschema.ValidationError) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		return typeMessage(k)
	case *kind.Enum:
		return fmt.Sprintf("must be one of %s; got %s", listValues(k.Want), short(k.Got))
	case *kind.MinLength:
		return "must be a non-empty string"
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d element(s)", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d element(s); it has %d", k.Want, k.Got)
	case *kind.MaxProperties:
		return fmt.Sprintf("must have at most %d member(s); it has %d", k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters long; it has %d", k.Want, k.Got)
	case *kind.Minimum:
		return "must be at least " + k.Want.RatString()
	case *kind.Maximum:
		return "must be at most " + k.Want.RatString()
	case *kind.ExclusiveMinimum, *kind.ExclusiveMaximum:
		return "must be a finite number; this one is too large for a float64 and reads as infinity"
	case *kind.FalseSchema:
		return "is not allowed here"
	}
	return e.ErrorKind.LocalizedString(printer)
}

func typeMessage(k *kind.Type) string {
	want := slices.Sorted(slices.Values(k.Want))
	if k.Got == "null" && (slices.Equal(want, anyButNull) || !slices.Contains(want, "null")) {
		return "is required (present and not null)"
	}
	words := make([]string, 0, len(want))
	for _, w := range want {
		if w != "null" {
			words = append(words, article(w))
		}
	}
	return fmt.Sprintf("must be %s, not %s", strings.Join(words, " or "), article(k.Got))
}

func article(t string) string {
	switch t {
	case "array":
		return "a list"
	case "object", "integer":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

func listValues(vs []any) string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if v != nil && v != "" {
			out = append(out, fmt.Sprint(v))
		}
	}
	return strings.Join(out, ", ")
}

// short renders a value for a message, cut to a readable length.
func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}
