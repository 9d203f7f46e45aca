package hook

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/ewp-go/ewp/internal/jsonraw"
	"github.com/ewp-go/ewp/warrant"
)

// Exact keys. encoding/json matches keys to struct fields regardless of
// case and lets a repeated key win last, so {"tool_name":"Read",
// "Tool_Name":"Bash"} could be judged as one tool and run as another by a
// client whose parser differs. The hooks split each object by exact key
// and refuse a repeated key, a key that equals a known one only when case
// is ignored, and text a decoder would silently rewrite (a lone UTF-16
// surrogate escape, invalid UTF-8): the judged call is the call the
// client makes, or none. Keys the hook does not know are left alone, so
// a newer client's extra fields do not block every tool.

// members splits raw, which must be one JSON object, into its members.
func members(field string, raw []byte, known []string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, refuse(warrant.CodeInvalidAction, field, "must be a JSON object")
	}
	m := make(map[string]json.RawMessage, 8)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, refuse(warrant.CodeInvalidAction, field, "is not valid JSON: %v", err)
		}
		key := t.(string) // inside an object, the decoder yields keys as strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, refuse(warrant.CodeInvalidAction, join(field, key), "is not valid JSON: %v", err)
		}
		if err := memberProblem(field, key, v, m, known); err != nil {
			return nil, err
		}
		m[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, refuse(warrant.CodeInvalidAction, field, "is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, refuse(warrant.CodeInvalidAction, field, "must hold one JSON value; more follows it")
	}
	return m, nil
}

func memberProblem(field, key string, v json.RawMessage, seen map[string]json.RawMessage, known []string) error {
	if _, dup := seen[key]; dup {
		return refuse(warrant.CodeInvalidAction, join(field, key), "appears more than once; give each member once")
	}
	for _, k := range known {
		if key != k && strings.EqualFold(key, k) {
			return refuse(warrant.CodeInvalidAction, join(field, key),
				"is not a member; keys are matched exactly (did you mean %q?)", k)
		}
	}
	if badText(v) {
		return refuse(warrant.CodeLoneSurrogate, join(field, key), "holds a lone UTF-16 surrogate escape or invalid "+
			"UTF-8, which a JSON decoder silently rewrites to U+FFFD (a different text); it is refused, never judged altered")
	}
	return nil
}

// str decodes a member that must be a JSON string ("" when absent).
func str(m map[string]json.RawMessage, field, key string, required bool) (string, error) {
	raw, ok := m[key]
	if !ok {
		if required {
			return "", refuse(warrant.CodeInvalidAction, join(field, key), "is required")
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", refuse(warrant.CodeInvalidAction, join(field, key), "must be a string")
	}
	if required && s == "" {
		return "", refuse(warrant.CodeInvalidAction, join(field, key), "must not be empty")
	}
	return s, nil
}

// object returns a member that must be a JSON object ({} when absent and
// not required), checked for repeated keys at its top level.
func object(m map[string]json.RawMessage, field, key string, required bool) (json.RawMessage, error) {
	raw, ok := m[key]
	if !ok {
		if required {
			return nil, refuse(warrant.CodeInvalidAction, join(field, key), "is required")
		}
		return json.RawMessage(`{}`), nil
	}
	if _, err := members(join(field, key), raw, nil); err != nil {
		return nil, err
	}
	return raw, nil
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// badText reports a lone surrogate escape or invalid UTF-8 in raw JSON
// (jsonraw.BadText): text a decoder would silently rewrite.
func badText(raw []byte) bool { return jsonraw.BadText(raw) }
