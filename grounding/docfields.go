package grounding

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Field readers for DecodeDocument: each reports its problem as a
// *GraphError carrying the JSON path of the value it read.

// object decodes an object and rejects keys outside allowed, so a typo
// like "relation_type" for "type" fails loudly instead of being dropped.
func object(raw []byte, path string, allowed ...string) (map[string]json.RawMessage, *GraphError) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fieldError(orRoot(path), "", -1, RuleSyntax, "expected a JSON object: %s", jsonProblem(err))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return nil, fieldError(join(path, k), "", -1, RuleUnknownField, "unknown field %q", k)
		}
	}
	return m, nil
}

func array(m map[string]json.RawMessage, path, key string, required bool) ([]json.RawMessage, *GraphError) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		if required {
			return nil, fieldError(join(path, key), "", -1, RuleMissingField, "%s is required", key)
		}
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fieldError(join(path, key), "", -1, RuleSyntax, "expected a JSON array")
	}
	return items, nil
}

func optString(m map[string]json.RawMessage, path, key string, dst *string) *GraphError {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fieldError(join(path, key), "", -1, RuleSyntax, "expected a string")
	}
	return nil
}

func optObject(m map[string]json.RawMessage, path, key string, dst *JSONObject) *GraphError {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil || *dst == nil {
		return fieldError(join(path, key), "", -1, RuleSyntax, "expected a JSON object")
	}
	return nil
}

func optProvenance(m map[string]json.RawMessage, path, name string) (ProvenanceSource, *GraphError) {
	var s string
	if err := optString(m, path, "provenance", &s); err != nil {
		return "", err
	}
	if s != "" && !ProvenanceSource(s).Valid() {
		return "", fieldError(join(path, "provenance"), name, -1, RuleProvenance, "unknown provenance %q", s)
	}
	return ProvenanceSource(s), nil
}

// levelField reads a required level: absent is missingRule, a non-integer
// is a syntax error, an integer outside 0..4 is RuleLevelRange.
func levelField(m map[string]json.RawMessage, path, key, missingRule string) (DepthLevel, *GraphError) {
	raw, ok := m[key]
	if !ok || isNull(raw) {
		return 0, fieldError(join(path, key), "", -1, missingRule, "%s is required", key)
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(raw)))
	if err != nil {
		return 0, fieldError(join(path, key), "", -1, RuleSyntax, "%s must be an integer from 0 to 4, got %s", key, raw)
	}
	if !DepthLevel(n).Valid() {
		return 0, fieldError(join(path, key), "", -1, RuleLevelRange, "%s %d is outside 0..4", key, n)
	}
	return DepthLevel(n), nil
}

func fieldError(path, name string, depth int, rule, format string, args ...any) *GraphError {
	return &GraphError{Path: path, Primitive: name, Depth: depth, Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "$"
	}
	return path
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func jsonProblem(err error) string {
	if err == nil {
		return "got null"
	}
	return err.Error()
}
