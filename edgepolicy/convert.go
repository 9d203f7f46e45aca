package edgepolicy

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
)

// argumentsRecord converts JSON-decoded tool arguments into the Cedar record
// exposed to policies as context.arguments. The mapping:
//
//   - object → record; array → set (Cedar sets are unordered and drop
//     duplicates, so a policy cannot test positions or counts);
//   - string → String; bool → Boolean;
//   - number → Long when integral and within int64; otherwise decimal when its
//     shortest decimal form has at most four fractional digits and fits
//     Cedar's decimal range; otherwise a String holding the number's text,
//     so no argument is ever silently rounded;
//   - null → omitted (the key is absent from the record, the element absent
//     from the set), so `context.arguments has x` is false for a null x.
//
// Numbers may arrive as float64 (encoding/json default), json.Number
// (UseNumber) or Go integers from in-process callers. Anything else, and a
// non-finite float, is an error, which the caller turns into a fail-closed
// violation.
func argumentsRecord(args map[string]any) (cedar.Record, error) {
	return recordValue(args, "arguments")
}

// RecordOf converts a JSON-decoded object to a Cedar record by the mapping
// of argumentsRecord; path names the object in errors ("input" gives
// "input.a.b[2]: …"). It sets no bound: the caller bounds what it decodes.
func RecordOf(m map[string]any, path string) (cedar.Record, error) {
	return recordValue(m, path)
}

// toCedar converts one value; present is false for null.
func toCedar(v any, path string) (value cedar.Value, present bool, err error) {
	switch x := v.(type) {
	case nil:
		return nil, false, nil
	case string:
		return cedar.String(x), true, nil
	case bool:
		return cedar.Boolean(x), true, nil
	case map[string]any:
		value, err = recordValue(x, path)
	case []any:
		value, err = setValue(x, path)
	case float64:
		value, err = floatValue(x)
	case float32:
		value, err = floatValue(float64(x))
	case json.Number:
		value, err = numberValue(x)
	case int:
		value = cedar.Long(x)
	case int64:
		value = cedar.Long(x)
	case int32:
		value = cedar.Long(x)
	default:
		err = fmt.Errorf("unsupported value of Go type %T", v)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	return value, true, nil
}

// recordValue walks keys in sorted order so that, when several values are
// unconvertible, the one reported is the same on every run.
func recordValue(m map[string]any, path string) (cedar.Record, error) {
	rm := make(cedar.RecordMap, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, present, err := toCedar(m[k], path+"."+k)
		if err != nil {
			return cedar.Record{}, err
		}
		if present {
			rm[cedar.String(k)] = v
		}
	}
	return cedar.NewRecord(rm), nil
}

func setValue(a []any, path string) (cedar.Set, error) {
	vs := make([]cedar.Value, 0, len(a))
	for i, e := range a {
		v, present, err := toCedar(e, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return cedar.Set{}, err
		}
		if present {
			vs = append(vs, v)
		}
	}
	return cedar.NewSet(vs...), nil
}

// int64 bounds as float64; 2^63 itself is out of range.
const (
	minLongFloat = -9223372036854775808.0
	maxLongFloat = 9223372036854775808.0
)

func floatValue(f float64) (cedar.Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("number %v is not finite", f)
	}
	if f == math.Trunc(f) && f >= minLongFloat && f < maxLongFloat {
		return cedar.Long(int64(f)), nil
	}
	if d, err := types.ParseDecimal(strconv.FormatFloat(f, 'f', -1, 64)); err == nil {
		return d, nil
	}
	return cedar.String(strconv.FormatFloat(f, 'g', -1, 64)), nil
}

// numberValue works on the number's text so that nothing is rounded: an
// integer or a decimal literal with at most four fractional digits is exact
// in Cedar, anything else (exponent forms, more digits, out of range) is
// passed on as its original text. A decimal literal with an integral value
// ("2.0") becomes a Long, as it would after decoding to float64, so a policy
// sees the same value whichever way the caller decoded its JSON.
func numberValue(n json.Number) (cedar.Value, error) {
	text := string(n)
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return cedar.Long(i), nil
	}
	if _, err := json.Marshal(n); err != nil { // rejects text that is not a JSON number
		return nil, fmt.Errorf("invalid number %q", text)
	}
	d, err := types.ParseDecimal(text)
	if err != nil {
		return cedar.String(text), nil
	}
	if whole, ok := strings.CutSuffix(d.String(), ".0"); ok {
		i, err := strconv.ParseInt(whole, 10, 64) // cannot fail: the decimal's own integer part
		return cedar.Long(i), err
	}
	return d, nil
}
