package warrant

import (
	"strconv"

	"github.com/ewp-go/ewp/warrant/internal/pyjson"
)

// Limits bound what one view may cost to decode and evaluate, so that no
// single request or stored snapshot can take unbounded memory or time. A
// view over any limit is refused with CodeLimitExceeded, naming the field
// and the limit, before it is evaluated. The zero value of a field means
// its default (DefaultLimits); a negative value means no limit.
//
// The defaults are far above anything the reference pack and the public
// differential corpus contain, so conformance is unaffected.
type Limits struct {
	// MaxViewBytes bounds the JSON text of one view (adapter_meta included).
	MaxViewBytes int
	// MaxRecords bounds assertions + evidence + checks + conflicts +
	// lineage edges together.
	MaxRecords int
	// MaxSubjects bounds each subjects list (the view's and each check's)
	// and each conflict's proposition_ids and omitted_sources.
	MaxSubjects int
	// MaxStringBytes bounds any one string value (ids, texts, times, list
	// entries, evaluated_at, strings inside adapter_meta), in UTF-8 bytes,
	// as the view holds it: after str(), which can lengthen a text.
	MaxStringBytes int
}

// DefaultLimits are the limits a zero Limits stands for.
var DefaultLimits = Limits{
	MaxViewBytes:   4 << 20,
	MaxRecords:     20_000,
	MaxSubjects:    10_000,
	MaxStringBytes: 64 << 10,
}

// withDefaults returns l with each zero field replaced by its default, so
// that after it a negative field is the only way to say "no limit".
func (l Limits) withDefaults() Limits {
	or := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	return Limits{
		MaxViewBytes:   or(l.MaxViewBytes, DefaultLimits.MaxViewBytes),
		MaxRecords:     or(l.MaxRecords, DefaultLimits.MaxRecords),
		MaxSubjects:    or(l.MaxSubjects, DefaultLimits.MaxSubjects),
		MaxStringBytes: or(l.MaxStringBytes, DefaultLimits.MaxStringBytes),
	}
}

// exceeds reports whether n is over the limit max; a negative max is no
// limit.
func exceeds(n, max int) bool { return max >= 0 && n > max }

// overLimit is the refusal of a value over a limit: what it is ("has 12000
// entries"), then the limit and the Limits field that sets it.
func overLimit(field, what string, max int, name string) *Error {
	return &Error{Code: CodeLimitExceeded, Field: field,
		Rule: what + "; the limit is " + strconv.Itoa(max) + " (" + name + ")"}
}

// checkBytes refuses a text over MaxViewBytes, before anything reads it.
func (l Limits) checkBytes(n int) error {
	if exceeds(n, l.MaxViewBytes) {
		return overLimit("", "the view is "+strconv.Itoa(n)+" bytes of JSON text", l.MaxViewBytes, "MaxViewBytes")
	}
	return nil
}

// checkRecords refuses n records over MaxRecords.
func (l Limits) checkRecords(n int) error {
	if exceeds(n, l.MaxRecords) {
		return overLimit("", "the view has "+strconv.Itoa(n)+
			" records (assertions, evidence, checks, conflicts and lineage edges together)", l.MaxRecords, "MaxRecords")
	}
	return nil
}

// checkList refuses a subjects, omitted_sources or proposition_ids list
// of n entries over MaxSubjects.
func (l Limits) checkList(field string, n int) error {
	if exceeds(n, l.MaxSubjects) {
		return overLimit(field, "has "+strconv.Itoa(n)+" entries", l.MaxSubjects, "MaxSubjects")
	}
	return nil
}

// checkStrings refuses a view holding a string over MaxStringBytes: an
// id, text, time or list entry, as decoded (after str(), which can make
// a text longer than any string in the JSON). adapter_meta is checked
// where it is decoded (checkMeta).
func (l Limits) checkStrings(v *View) error {
	if l.MaxStringBytes < 0 {
		return nil
	}
	max := l.MaxStringBytes
	var n int
	f, over := v.FirstString(func(s string) bool { n = len(s); return n > max })
	if !over {
		return nil
	}
	return overLimit(f.Path(), "is "+strconv.Itoa(n)+" bytes long", max, "MaxStringBytes")
}

// checkMeta refuses an adapter_meta holding a string over MaxStringBytes.
// canonical is its canonical text: every string is written there at least
// as long as it is, so a short text needs no walk.
func (l Limits) checkMeta(x pyjson.Value, canonical []byte) error {
	if !exceeds(len(canonical), l.MaxStringBytes) {
		return nil
	}
	if path, n := longString(x, l.MaxStringBytes); path != "" {
		return overLimit(path, "is "+strconv.Itoa(n)+" bytes long", l.MaxStringBytes, "MaxStringBytes")
	}
	return nil
}

// longString returns the path (under adapter_meta) and length of the first
// string in x over max bytes, or "". Objects are read as Python keeps them:
// a repeated key's last value.
func longString(x pyjson.Value, max int) (string, int) {
	if rest, n, ok := walkStrings(x, max); ok {
		return "adapter_meta" + rest, n
	}
	return "", 0
}

// walkStrings finds the first string in x over max bytes; its path below
// x is built on the way back, so a walk that finds none builds none.
func walkStrings(x pyjson.Value, max int) (rest string, n int, ok bool) {
	switch x.Kind() {
	case pyjson.String:
		return "", len(x.Str()), len(x.Str()) > max
	case pyjson.Array:
		x.Elems(func(i int, el pyjson.Value) bool {
			if rest, n, ok = walkStrings(el, max); ok {
				rest = "[" + strconv.Itoa(i) + "]" + rest
			}
			return !ok
		})
	case pyjson.Object:
		for _, m := range x.Members() {
			if rest, n, ok = walkStrings(m.Val, max); ok {
				return "." + m.Key + rest, n, true
			}
		}
	}
	return rest, n, ok
}

// checkEvaluatedAt refuses a document's evaluated_at over MaxStringBytes.
func (l Limits) checkEvaluatedAt(s string) error {
	if exceeds(len(s), l.MaxStringBytes) {
		return overLimit("evaluated_at", "is "+strconv.Itoa(len(s))+" bytes long", l.MaxStringBytes, "MaxStringBytes")
	}
	return nil
}
