// Package pyjson reads and writes JSON the way the EWP reference (a Python
// program) does: json.loads semantics on input, str()/repr() of decoded
// values for scalar normalisation, and json.dumps(sort_keys=True) for the
// canonical form. Matching Python byte for byte is what makes derived view
// ids agree with the reference.
package pyjson

// Kind is the Python type a JSON value decodes to.
type Kind uint8

// Kinds, named after the Python types json.loads produces.
const (
	Null Kind = iota
	Bool
	Int
	Float
	String
	Array
	Object
)

// Value is one decoded JSON value. Strings are Go strings that may hold
// lone surrogates encoded as WTF-8 (Python str can hold them; json.loads
// accepts "\ud800").
type Value struct {
	Kind Kind
	Bool bool
	// Str is the string value, or the literal text of an Int.
	Str   string
	Float float64
	Arr   []Value
	Obj   []Member
}

// Member is one key of an object. Duplicate keys are resolved as Python's
// dict does: the last value wins, at the position of the first.
type Member struct {
	Key string
	Val Value
}

// Get returns the member named key, or a Null value and false.
func (v *Value) Get(key string) (Value, bool) {
	for i := range v.Obj {
		if v.Obj[i].Key == key {
			return v.Obj[i].Val, true
		}
	}
	return Value{}, false
}

// IsNull reports whether the value is JSON null.
func (v Value) IsNull() bool { return v.Kind == Null }
