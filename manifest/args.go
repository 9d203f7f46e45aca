package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds of one call's arguments. MaxArgumentsBytes is the MCP entrance's
// bound of a whole message (mcp.MaxBodyBytes), so no call that reaches a
// gateway is refused here for size alone; MaxArgumentsDepth bounds the
// nesting walked while decoding, so a hostile [[[[…]]]] costs no stack.
const (
	MaxArgumentsBytes = 1 << 20
	MaxArgumentsDepth = 64
)

// decodeArguments reads a call's arguments once, strictly: a JSON object
// (absent or null: {}), valid UTF-8, at most MaxArgumentsBytes and
// MaxArgumentsDepth deep, numbers kept exact (json.Number), and no
// member named twice in any object. A duplicate is refused, not
// resolved: the gate would judge one value and the downstream server
// might act on the other.
func decodeArguments(raw json.RawMessage) (map[string]any, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return map[string]any{}, nil
	}
	if len(raw) > MaxArgumentsBytes {
		return nil, limitErr("/arguments", fmt.Sprintf("the arguments are %d bytes; at most %d are read", len(raw), MaxArgumentsBytes))
	}
	if !utf8.Valid(raw) {
		return nil, argErr("/arguments", "are not valid UTF-8")
	}
	if trimmed[0] != '{' {
		return nil, argErr("/arguments", "must be a JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	v, err := value(d, "/arguments", 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, argErr("/arguments", "must be one JSON object with nothing after it")
	}
	return v.(map[string]any), nil
}

// value reads one JSON value at pointer at, depth levels down.
func value(d *json.Decoder, at string, depth int) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, argErr(at, "is not valid JSON: "+err.Error())
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if depth >= MaxArgumentsDepth {
		return nil, limitErr(at, fmt.Sprintf("nests deeper than %d levels", MaxArgumentsDepth))
	}
	if delim == '[' {
		return array(d, at, depth)
	}
	return object(d, at, depth)
}

func array(d *json.Decoder, at string, depth int) (any, error) {
	out := []any{}
	for d.More() {
		v, err := value(d, at+"/"+strconv.Itoa(len(out)), depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if _, err := d.Token(); err != nil { // ']'
		return nil, argErr(at, "is not valid JSON: "+err.Error())
	}
	return out, nil
}

func object(d *json.Decoder, at string, depth int) (any, error) {
	out := map[string]any{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, argErr(at, "is not valid JSON: "+err.Error())
		}
		k := tok.(string) // the decoder only yields string keys inside an object
		here := at + "/" + escapeToken(k)
		if _, dup := out[k]; dup {
			return nil, argErr(here, "is named twice; a member must be given once")
		}
		if out[k], err = value(d, here, depth+1); err != nil {
			return nil, err
		}
	}
	if _, err := d.Token(); err != nil { // '}'
		return nil, argErr(at, "is not valid JSON: "+err.Error())
	}
	return out, nil
}

// canonical is v as the gate hashes it (mcp's argumentsHash): object keys
// sorted, numbers as sent, no HTML escaping, no trailing newline.
func canonical(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // decoded from JSON with UseNumber: always encodable
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// pointer is a parsed argument selector: a top-level member name, or an
// RFC 6901 JSON pointer into the arguments ("/options/path").
type pointer []string

// parsePointer reads a selector; ok is false for a malformed pointer.
func parsePointer(sel string) (pointer, bool) {
	if sel == "" {
		return nil, false
	}
	if !strings.HasPrefix(sel, "/") {
		return pointer{sel}, true
	}
	parts := strings.Split(sel[1:], "/")
	for i, p := range parts {
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(p, "~0", ""), "~1", ""), "~") {
			return nil, false
		}
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
	}
	return pointer(parts), true
}

// String is the selector as a pointer into the call ("/arguments/path").
func (p pointer) String() string {
	var b strings.Builder
	b.WriteString("/arguments")
	for _, t := range p {
		b.WriteString("/" + escapeToken(t))
	}
	return b.String()
}

// lookup finds the value p selects; ok is false when it is absent.
func (p pointer) lookup(v any) (any, bool) {
	for _, t := range p {
		switch x := v.(type) {
		case map[string]any:
			child, ok := x[t]
			if !ok {
				return nil, false
			}
			v = child
		case []any:
			i, ok := arrayIndex(t, len(x))
			if !ok {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// replace returns v with the value p selects replaced by with (v is not
// changed: containers on the way are copied). Absent: v as it was.
func (p pointer) replace(v any, with any) any {
	if len(p) == 0 {
		return with
	}
	switch x := v.(type) {
	case map[string]any:
		child, ok := x[p[0]]
		if !ok {
			return v
		}
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = val
		}
		out[p[0]] = p[1:].replace(child, with)
		return out
	case []any:
		i, ok := arrayIndex(p[0], len(x))
		if !ok {
			return v
		}
		out := append([]any(nil), x...)
		out[i] = p[1:].replace(x[i], with)
		return out
	}
	return v
}

// arrayIndex reads an RFC 6901 array index: digits, no leading zero.
func arrayIndex(t string, n int) (int, bool) {
	if t == "" || (len(t) > 1 && t[0] == '0') || strings.TrimLeft(t, "0123456789") != "" {
		return 0, false
	}
	i, err := strconv.Atoi(t)
	return i, err == nil && i < n
}

func escapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}
