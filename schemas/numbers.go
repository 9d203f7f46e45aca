package schemas

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The validator compares numbers with math/big, which expands a literal
// such as 1e4000000 into millions of digits (slow), refuses larger ones
// outright (which the library then dereferences as nil) and parses very
// long mantissas in quadratic time. So before validating, tame replaces
// such numbers with small stand-ins that every keyword in these schemas
// judges alike, or more leniently: a schema may be looser than the kernel,
// never stricter.
const (
	maxMagnitude = 400  // every bound in the schemas lies within 10^±309
	maxLiteral   = 1024 // longer literals are hostile or generated
)

// tame returns doc with out-of-range json.Numbers replaced, copying only
// the containers on the path to a replaced number.
func tame(doc any) any {
	out, _ := tameValue(doc)
	return out
}

func tameValue(doc any) (any, bool) {
	switch x := doc.(type) {
	case json.Number:
		t := tameNumber(x)
		return t, t != x
	case map[string]any:
		var out map[string]any
		for k, v := range x {
			if t, changed := tameValue(v); changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = t
			}
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, v := range x {
			if t, changed := tameValue(v); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = t
			}
		}
		if out != nil {
			return out, true
		}
	}
	return doc, false
}

// tameNumber picks the stand-in. Magnitude is the decimal order of the
// leading non-zero digit (123.4 → 2, 0.05 → -2).
//
//   - |n| ≥ 10^401 → ±1e400: an integer above every maximum. The kernel
//     refuses such a confidence (infinite) or freshness (too large or not
//     an integer literal); an integer view_id of that size it accepts, and
//     so does the schema.
//   - 0 < |n| < 10^-400 → ±1e-400: inside every bound and not an integer,
//     like the original.
//   - a zero → 0, whatever its spelling (0e99999999999999999999 would
//     not parse).
//   - any other literal longer than maxLiteral → 0.5. It has a fraction or
//     an exponent (a plain integer that long is past 10^400), so the kernel
//     refuses it as a freshness or view_id, as the schema refuses 0.5, and
//     the schema accepts 0.5 as a confidence, as leniently as possible.
func tameNumber(n json.Number) json.Number {
	s := string(n)
	neg := strings.HasPrefix(s, "-")
	mag, zero, ok := magnitude(strings.TrimPrefix(s, "-"))
	switch {
	case !ok:
		return n // not a JSON number literal; leave it to the validator
	case zero:
		return "0"
	case mag > maxMagnitude:
		return signed(neg, "1e400")
	case mag < -maxMagnitude:
		return signed(neg, "1e-400")
	case len(s) > maxLiteral:
		return "0.5"
	}
	return n
}

// magnitude reads an unsigned JSON number literal. An exponent too large
// for an int saturates, which keeps its sign and so its verdict.
func magnitude(s string) (mag int, zero, ok bool) {
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil {
			if ne, isNum := err.(*strconv.NumError); !isNum || ne.Err != strconv.ErrRange {
				return 0, false, false
			}
			e = 1 << 40
			if strings.HasPrefix(s[i+1:], "-") {
				e = -e
			}
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	k := strings.IndexFunc(digits, func(r rune) bool { return r != '0' })
	if k < 0 {
		return 0, true, true
	}
	return exp + len(intPart) - k - 1, false, true
}

func signed(neg bool, s string) json.Number {
	if neg {
		return json.Number("-" + s)
	}
	return json.Number(s)
}
