package callpolicy

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cedar-policy/cedar-go"

	"github.com/ewp-go/ewp/edgepolicy"
)

// Bounds of context.input: what is given to Cedar per call. Past them no
// policy is evaluated and every policy fires (fail closed), so an agent
// cannot slip a call past a policy by making its arguments expensive.
const (
	MaxInputBytes  = 256 << 10
	MaxInputDepth  = 32
	MaxInputValues = 10000
)

// inputRecord turns the call's arguments (JSON text; empty or null is no
// arguments) into the record context.input.
func inputRecord(raw json.RawMessage) (cedar.Record, error) {
	if len(raw) > MaxInputBytes {
		return cedar.Record{}, fmt.Errorf("the arguments are %d bytes, over the limit of %d", len(raw), MaxInputBytes)
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return cedar.NewRecord(nil), nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return cedar.Record{}, fmt.Errorf("the arguments are not JSON: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return cedar.Record{}, fmt.Errorf("the arguments are a JSON %s, not an object", jsonKind(v))
	}
	if n, err := count(m, 1, 0); err != nil {
		return cedar.Record{}, err
	} else if n > MaxInputValues {
		return cedar.Record{}, fmt.Errorf("the arguments hold %d values, over the limit of %d", n, MaxInputValues)
	}
	return edgepolicy.RecordOf(m, "input")
}

// count counts the values under v (v included), refusing past
// MaxInputDepth; it stops early once past MaxInputValues.
func count(v any, depth, n int) (int, error) {
	if depth > MaxInputDepth {
		return n, fmt.Errorf("the arguments nest deeper than %d levels", MaxInputDepth)
	}
	n++
	var err error
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if n, err = count(e, depth+1, n); err != nil || n > MaxInputValues {
				return n, err
			}
		}
	case []any:
		for _, e := range x {
			if n, err = count(e, depth+1, n); err != nil || n > MaxInputValues {
				return n, err
			}
		}
	}
	return n, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	}
	return "number"
}
