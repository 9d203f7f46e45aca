// Package pyjson reads and writes JSON the way the EWP reference (a Python
// program) does: json.loads semantics on input, str()/repr() of decoded
// values for scalar normalisation, and json.dumps(sort_keys=True) for the
// canonical form. Matching Python byte for byte is what makes derived view
// ids agree with the reference.
package pyjson

import "strconv"

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

// node is one entry of the tape. Containers are followed by their
// children (for objects: key node, then the value's subtree); end is the
// index just past the node's subtree, so siblings are found by skipping.
//
// A node holds no pointers (text is an offset into the source, or into
// the side table of unescaped strings), so the tape costs the garbage
// collector nothing to scan.
type node struct {
	kind Kind
	b    bool
	esc  bool  // text is escaped[off] rather than src[off:off+ln]
	n    int32 // children of a container
	end  int32
	off  int32
	ln   int32
}

type tape struct {
	src     string
	escaped []string
	nodes   []node
}

func (t *tape) text(n *node) string {
	if n.esc {
		return t.escaped[n.off]
	}
	return t.src[n.off : n.off+n.ln]
}

// Value is a handle on one decoded value. The zero Value is JSON null.
// Strings may hold lone surrogates encoded as WTF-8 (Python str can hold
// them; json.loads accepts "\ud800").
type Value struct {
	t *tape
	i int32
}

func (v Value) node() *node {
	if v.t == nil {
		return &nullNode
	}
	return &v.t.nodes[v.i]
}

var nullNode = node{kind: Null}

// Kind returns the value's type.
func (v Value) Kind() Kind { return v.node().kind }

// IsNull reports whether the value is JSON null.
func (v Value) IsNull() bool { return v.node().kind == Null }

// Bool returns a boolean's value.
func (v Value) Bool() bool { return v.node().b }

// Str returns a string's value, or a number's literal text.
func (v Value) Str() string {
	if v.t == nil {
		return ""
	}
	return v.t.text(&v.t.nodes[v.i])
}

// Len is the number of elements of an array or members of an object
// (duplicate keys counted).
func (v Value) Len() int { return int(v.node().n) }

// Float returns a number as Python's float() reads it: ints round to the
// nearest float64, overflow gives ±Inf.
func (v Value) Float() float64 {
	f, _ := strconv.ParseFloat(v.Str(), 64)
	return f
}

// Elems calls fn for each element of an array, in order.
func (v Value) Elems(fn func(i int, el Value) bool) {
	nd := v.node()
	if nd.kind != Array {
		return
	}
	j := v.i + 1
	for k := 0; k < int(nd.n); k++ {
		if !fn(k, Value{v.t, j}) {
			return
		}
		j = v.t.nodes[j].end
	}
}

// Member is one key of an object.
type Member struct {
	Key string
	Val Value
}

// Members returns an object's members as a Python dict holds them: each
// key once, at the position of its first occurrence, with its last value.
func (v Value) Members() []Member {
	nd := v.node()
	if nd.kind != Object {
		return nil
	}
	out := make([]Member, 0, nd.n)
	// Repeated keys are found by a scan while the object is small, and by
	// an index past that: scanning alone made an object of n keys cost n²
	// (a 200 kB adapter_meta took half a second).
	var index map[string]int
	j := v.i + 1
	for k := 0; k < int(nd.n); k++ {
		key, val := v.t.text(&v.t.nodes[j]), Value{v.t, j + 1}
		if x := memberIndex(out, index, key); x >= 0 {
			out[x].Val = val
		} else {
			out = append(out, Member{key, val})
			switch {
			case index != nil:
				index[key] = len(out) - 1
			case len(out) > smallObject:
				index = make(map[string]int, nd.n)
				for x := range out {
					index[out[x].Key] = x
				}
			}
		}
		j = v.t.nodes[j+1].end
	}
	return out
}

// smallObject is the number of members up to which a scan finds a key
// faster than a map.
const smallObject = 16

// memberIndex returns the position of key in out, or -1.
func memberIndex(out []Member, index map[string]int, key string) int {
	if index != nil {
		if x, ok := index[key]; ok {
			return x
		}
		return -1
	}
	for x := range out {
		if out[x].Key == key {
			return x
		}
	}
	return -1
}

// Iter walks an object's members in order, duplicates included.
type Iter struct {
	t    *tape
	j    int32
	left int32
}

// Iter returns an iterator over an object's members (none for other kinds).
func (v Value) Iter() Iter {
	nd := v.node()
	if nd.kind != Object {
		return Iter{}
	}
	return Iter{t: v.t, j: v.i + 1, left: nd.n}
}

// Next returns the next member, or ok=false at the end.
func (it *Iter) Next() (key string, val Value, ok bool) {
	if it.left == 0 {
		return "", Value{}, false
	}
	k := it.j
	it.j = it.t.nodes[k+1].end
	it.left--
	return it.t.text(&it.t.nodes[k]), Value{it.t, k + 1}, true
}

// Items walks an array's elements in order.
type Items struct {
	t    *tape
	j    int32
	left int32
}

// Items returns an iterator over an array's elements (none for other kinds).
func (v Value) Items() Items {
	nd := v.node()
	if nd.kind != Array {
		return Items{}
	}
	return Items{t: v.t, j: v.i + 1, left: nd.n}
}

// Next returns the next element, or ok=false at the end.
func (it *Items) Next() (val Value, ok bool) {
	if it.left == 0 {
		return Value{}, false
	}
	k := it.j
	it.j = it.t.nodes[k].end
	it.left--
	return Value{it.t, k}, true
}
