package audit

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/ewp-go/ewp/internal/termtext"
)

// ArgumentsText is the decision's recorded arguments as a person reads
// them on an approval screen: indented JSON, characters as they are but
// for those termtext makes visible (controls, bidi overrides), so the
// text shown is the text recorded; for truncated arguments, the start of
// their text followed by a line saying they were cut. "" when none were
// recorded. Whoever prints it still escapes it for its medium (HTML).
func (d *Decision) ArgumentsText() string {
	if len(d.Arguments) == 0 {
		return ""
	}
	if d.ArgumentsTruncated {
		var start string
		if json.Unmarshal(d.Arguments, &start) != nil {
			start = string(d.Arguments)
		}
		return termtext.Escape(start) + "…\n(cut: only the start of the arguments is recorded; arguments_hash covers them whole)"
	}
	dec := json.NewDecoder(bytes.NewReader(d.Arguments))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return termtext.Escape(string(d.Arguments))
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the page escapes; a path reads a<b, not a\u003cb
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return termtext.Escape(string(d.Arguments))
	}
	return string(termtext.JSON([]byte(strings.TrimSuffix(b.String(), "\n"))))
}
