package mcp

import (
	"encoding/json"
	"unicode/utf8"
)

// splitObject splits raw, a JSON object the caller has already validated
// (the request was checked once with json.Valid), into its members,
// without checking or copying it again: each value is a sub-slice of raw,
// capped so an append can never write into the rest of the message. Keys
// are decoded as encoding/json decodes them, and a later duplicate wins,
// so the result is what json.Unmarshal into a map[string]json.RawMessage
// gives (TestSplitObjectMatchesUnmarshal). ok is false when raw is not an
// object after all; callers then decode it with encoding/json, which says
// what is wrong.
func splitObject(raw []byte) (m map[string]json.RawMessage, ok bool) {
	m, _, ok = splitMembers(raw)
	return m, ok
}

// splitMembers is splitObject that also reports the first key given more
// than once ("" when none), for the protocol's own objects, where a
// repeated key is refused rather than silently last-wins.
func splitMembers(raw []byte) (m map[string]json.RawMessage, dup string, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, "", false
	}
	m = make(map[string]json.RawMessage, 4)
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return m, "", skipSpace(raw, i+1) == len(raw)
	}
	for i < len(raw) && raw[i] == '"' {
		end := skipString(raw, i)
		key, kok := decodeKey(raw[i:end])
		i = skipSpace(raw, end)
		if !kok || i >= len(raw) || raw[i] != ':' {
			return nil, "", false
		}
		start := skipSpace(raw, i+1)
		end = skipValue(raw, start)
		if end <= start {
			return nil, "", false
		}
		if _, seen := m[key]; seen && dup == "" {
			dup = key
		}
		m[key] = raw[start:end:end]
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == '}' {
			return m, dup, skipSpace(raw, i+1) == len(raw)
		}
		if i >= len(raw) || raw[i] != ',' {
			return nil, "", false
		}
		i = skipSpace(raw, i+1)
	}
	return nil, "", false
}

// decodeKey decodes a quoted key. Printable ASCII without escapes is its
// own text; anything else goes through encoding/json, which replaces
// invalid UTF-8 and decodes escapes.
func decodeKey(q []byte) (string, bool) {
	if len(q) < 2 || q[len(q)-1] != '"' {
		return "", false
	}
	plain := true
	for _, c := range q[1 : len(q)-1] {
		if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(q[1 : len(q)-1]), true
	}
	var s string
	return s, json.Unmarshal(q, &s) == nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i]
// (a quote), or len(b) when it does not end.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}
