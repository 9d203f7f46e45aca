package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
)

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
