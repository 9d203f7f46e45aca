package grounding

import (
	"bytes"
	"encoding/json"
	"maps"
)

// JSONObject holds free-form properties and metadata. It decodes numbers as
// json.Number so that a stored revision re-marshals byte-for-byte (no
// float64 rounding of large integers).
type JSONObject map[string]any

// UnmarshalJSON decodes with UseNumber; null yields a nil object.
func (o *JSONObject) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return err
	}
	*o = m
	return nil
}

// orEmpty makes an absent object serialize as {} instead of null, which
// keeps the stored form canonical (absent and empty mean the same, §1.5).
func (o JSONObject) orEmpty() JSONObject {
	if o == nil {
		return JSONObject{}
	}
	return o
}

// clone deep-copies o so a snapshot never shares mutable maps with callers.
func (o JSONObject) clone() JSONObject {
	if o == nil {
		return nil
	}
	out := make(JSONObject, len(o))
	for k, v := range o {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return map[string]any(JSONObject(x).clone())
	case JSONObject:
		return x.clone()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case []string:
		return append([]string(nil), x...)
	case map[string]string:
		return maps.Clone(x)
	default:
		// Scalars are immutable; other Go types built by callers are
		// copied by value here, which is the best a generic clone can do.
		return v
	}
}
