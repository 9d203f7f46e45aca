package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText prints the report in the reference runner's shape: a count
// line per section, the verdict, then each failing case.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "EWP conformance: %s (policy %s) against %s\n\n", warrantProtocol, warrantPolicy, r.Pack)
	for _, c := range r.Counts {
		fmt.Fprintf(w, "  %-16s %d/%d\n", c.Section, c.Passed, c.Total)
	}
	verdict := "CONFORMANT"
	if !r.Conformant {
		verdict = "NONCONFORMANT"
	}
	fmt.Fprintf(w, "\nResult: %s\n", verdict)
	for _, f := range r.Failures {
		fmt.Fprintf(w, "  FAIL %s/%s: %s: expected %s, got %s\n", f.Section, f.Case, f.Field, show(f.Expected), show(f.Actual))
	}
	if len(r.Notes) > 0 {
		fmt.Fprintf(w, "\nNon-normative differences (diagnostics only, not failures): %d\n", len(r.Notes))
		for _, f := range r.Notes {
			fmt.Fprintf(w, "  note %s: %s: reference %s, ours %s\n", f.Case, f.Field, show(f.Expected), show(f.Actual))
		}
	}
	return nil
}

// WriteJSON prints the report as one JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// show prints v as JSON text, with <, > and & as they are (they are
// data here, not HTML).
func show(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
