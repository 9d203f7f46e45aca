package pyjson

import (
	"math"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// Scanner reads one JSON document token by token, with the grammar and
// string semantics of Parse, for callers that know the shape they expect
// and want no tape. It does not report errors: the first thing that is not
// what the caller asked for (bad syntax, another type) stops it, every
// later read returns nothing, and Failed reports it. Callers then fall
// back to Parse, which says precisely what is wrong.
//
// Duplicate keys are the caller's business: Scanner hands every member
// over in order, as Iter does.
type Scanner struct {
	p      parser
	failed bool
	// opened is set between reading a container's opening byte and its
	// first member or element, when no comma is due.
	opened bool
}

// Reset starts reading a document. s is the document followed by one NUL
// byte, a sentinel that is not part of it: with it, looking at the next
// byte needs no end-of-text test.
func (sc *Scanner) Reset(s string) {
	sc.p = parser{s: s}
	sc.opened = false
	sc.failed = false
	if len(s) == 0 || len(s) > math.MaxInt32 || s[len(s)-1] != 0 {
		sc.p.s = "\x00"
		sc.failed = true
	}
}

const (
	low7s = 0x7f7f7f7f7f7f7f7f
	// Added to the low seven bits of a byte, these set its high bit
	// exactly when the byte is at least 0x20, or above 0x20.
	addGE20 = 0x6060606060606060
	addGT20 = 0x5f5f5f5f5f5f5f5f
)

// spaceControls reports whether every byte of x flagged in ctl is a tab,
// line feed or carriage return: the control characters JSON allows as
// white space.
func spaceControls(x, ctl uint64) bool {
	for ; ctl != 0; ctl &= ctl - 1 {
		switch byte(x >> (bits.TrailingZeros64(ctl) &^ 7)) {
		case '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}

// Failed reports whether the scanner has stopped.
func (sc *Scanner) Failed() bool { return sc.failed }

// Stop makes the scanner fail: the caller met something it does not take.
func (sc *Scanner) Stop() {
	sc.failed = true
	sc.p.i = len(sc.p.s) - 1 // the sentinel
}

// Literal reads lit if the text goes on with exactly lit, and reports
// whether it did. A caller that has met a value's text before can take
// it again without reading it: the same text is the same value.
func (sc *Scanner) Literal(lit string) bool {
	if !strings.HasPrefix(sc.p.s[sc.p.i:len(sc.p.s)-1], lit) {
		return false
	}
	sc.p.i += len(lit)
	return true
}

// Pos is the offset of the next unread byte.
func (sc *Scanner) Pos() int { return sc.p.i }

// Text returns the source text s[from:to].
func (sc *Scanner) Text(from, to int) string { return sc.p.s[from:to] }

// End reports whether only white space is left, and fails if not.
func (sc *Scanner) End() bool {
	if sc.next() != 0 || sc.p.i != len(sc.p.s)-1 || sc.failed {
		sc.Stop()
		return false
	}
	return true
}

// next skips white space and returns the next byte, 0 at the end. It
// inlines; most calls find no white space.
func (sc *Scanner) next() byte {
	if c := sc.p.s[sc.p.i]; c > ' ' {
		return c
	}
	return sc.skipSpace()
}

// skipSpace finds the next byte above ' ', eight bytes a step, checking
// that the bytes it passes are white space.
func (sc *Scanner) skipSpace() byte {
	b, i := bytesOf(sc.p.s), sc.p.i
	if i+16 <= len(b) && b[i] == '\n' {
		// A line break and indentation, as before nearly every member of
		// indented JSON: find the first byte that is not a space among the
		// next fifteen.
		j := i + 1
		x := (load64(b, i) ^ spaces8) >> 8
		if x == 0 {
			j, x = i+8, load64(b, i+8)^spaces8
		}
		if x != 0 {
			if j += bits.TrailingZeros64(x) / 8; b[j] > ' ' {
				sc.p.i = j
				return b[j]
			}
		}
	}
	for ; i+8 <= len(b); i += 8 {
		x := load64(b, i)
		m := ((x&low7s + addGT20) | x) & highs8 // bytes above ' '
		k := bits.TrailingZeros64(m)            // 64 when there are none
		// Control bytes before it must be white space; in indented JSON
		// the only one is a line feed leading the run.
		ctl := ^((x&low7s + addGE20) | x) & highs8 & (1<<k - 1)
		if ctl != 0 && (ctl != 0x80 || byte(x) != '\n') && !spaceControls(x, ctl) {
			break
		}
		if m != 0 {
			sc.p.i = i + k/8
			return b[sc.p.i]
		}
	}
	for ; i < len(b); i++ {
		switch c := b[i]; c {
		case ' ', '\t', '\n', '\r':
			continue
		default:
			if c < ' ' && i < len(b)-1 {
				sc.Stop()
				return 0
			}
			sc.p.i = i
			return c
		}
	}
	return 0 // not reached: the sentinel ends the loop
}

// Peek tells the kind of the next value without reading it. Numbers are
// reported as Int until read; ok is false when no value starts here.
func (sc *Scanner) Peek() (k Kind, ok bool) {
	switch c := sc.next(); {
	case c == '"':
		return String, true
	case c == '{':
		return Object, true
	case c == '[':
		return Array, true
	case c == 'n':
		return Null, true
	case c == 't' || c == 'f':
		return Bool, true
	case c == '-' || (c >= '0' && c <= '9'):
		return Int, true
	}
	return 0, false
}

// Null reads a null if one is next and reports whether it did.
func (sc *Scanner) Null() bool {
	if sc.next() != 'n' {
		return false
	}
	if !sc.p.lit("null") {
		sc.Stop()
		return false
	}
	return true
}

// Bool reads a boolean; anything else fails.
func (sc *Scanner) Bool() bool {
	switch {
	case sc.next() == 't' && sc.p.lit("true"):
		return true
	case sc.next() == 'f' && sc.p.lit("false"):
		return false
	}
	sc.Stop()
	return false
}

// Str reads a string; anything else fails.
func (sc *Scanner) Str() string {
	if sc.next() != '"' {
		sc.Stop()
		return ""
	}
	s, i := sc.p.s, sc.p.i
	if j := skipPlain(s, i+1); j < len(s) && s[j] == '"' {
		sc.p.i = j + 1
		return s[i+1 : j]
	}
	return sc.slowString()
}

// slowString reads a string with escapes or non-ASCII text. Only strings
// can hold non-ASCII text, so checking their literals is what keeps the
// scanner to valid UTF-8 (Parse checks the whole text up front).
func (sc *Scanner) slowString() string {
	start := sc.p.i
	str, _, err := sc.p.scanString()
	if err != nil || !utf8.ValidString(sc.p.s[start:sc.p.i]) {
		sc.Stop()
		return ""
	}
	return str
}

// Number reads a number and returns its literal and kind (Int or Float);
// anything else fails.
func (sc *Scanner) Number() (string, Kind) {
	if c := sc.next(); c != '-' && (c < '0' || c > '9') {
		sc.Stop()
		return "", Null
	}
	start := sc.p.i
	k, err := sc.p.scanNumber()
	if err != nil {
		sc.Stop()
		return "", Null
	}
	return sc.p.s[start:sc.p.i], k
}

// Object reads the opening brace of an object; anything else fails.
func (sc *Scanner) Object() bool { return sc.open('{') }

// Array reads the opening bracket of an array; anything else fails.
func (sc *Scanner) Array() bool { return sc.open('[') }

func (sc *Scanner) open(c byte) bool {
	if sc.next() != c {
		sc.Stop()
		return false
	}
	sc.p.i++
	sc.opened = true
	return true
}

// Key reads the next member name of the object being read and the colon
// after it. It returns ok=false after reading the closing brace (or on
// failure).
func (sc *Scanner) Key() (key string, ok bool) {
	if !sc.Member() {
		return "", false
	}
	return sc.Name(), !sc.failed
}

// Member moves to the next member of the object being read, whose name
// Name or NameIs then reads. It returns false after reading the closing
// brace (or on failure).
func (sc *Scanner) Member() bool {
	c := sc.next()
	first := sc.opened
	sc.opened = false
	switch {
	case c == '"' && first:
		return true
	case c == ',' && !first:
		sc.p.i++
		if sc.next() == '"' {
			return true
		}
	case c == '}':
		sc.p.i++
		return false
	}
	sc.Stop()
	return false
}

// Name reads a member name and the colon after it.
func (sc *Scanner) Name() string {
	s, i := sc.p.s, sc.p.i
	// Names are almost always plain text followed at once by the colon.
	if j := skipPlain(s, i+1); j+1 < len(s) && s[j] == '"' && s[j+1] == ':' {
		sc.p.i = j + 2
		sc.skipOneSpace()
		return s[i+1 : j]
	}
	key := sc.slowString()
	if sc.next() != ':' {
		sc.Stop()
		return ""
	}
	sc.p.i++
	return key
}

// A Needle is a member name made ready for NameIs: the text a plainly
// written name has up to and including its colon, kept as three masked
// words too when it fits in them.
type Needle struct {
	lit  string // name + `":`
	w, m [3]uint64
}

// NewNeedle prepares name for NameIs.
func NewNeedle(name string) Needle {
	nd := Needle{lit: name + `":`}
	if len(nd.lit) > 24 {
		return nd
	}
	var lit, mask [24]byte
	copy(lit[:], nd.lit)
	for i := range nd.lit {
		mask[i] = 0xff
	}
	for k := range 3 {
		nd.w[k], nd.m[k] = load64(lit[:], 8*k), load64(mask[:], 8*k)
	}
	return nd
}

// NameIs reads the member name and its colon if the name is exactly the
// needle's, written plainly, and reports whether it did. Callers that can
// guess the next name (keys often come sorted) save reading it in full.
func (sc *Scanner) NameIs(nd *Needle) bool {
	at := sc.p.i + 1
	var ok bool
	if b := bytesOf(sc.p.s); at+24 <= len(b) && len(nd.lit) <= 24 {
		w := b[at : at+24]
		ok = load64(w, 0)&nd.m[0] == nd.w[0] && load64(w, 8)&nd.m[1] == nd.w[1] && load64(w, 16)&nd.m[2] == nd.w[2]
	} else {
		ok = strings.HasPrefix(sc.p.s[at:], nd.lit)
	}
	if ok {
		sc.p.i = at + len(nd.lit)
		sc.skipOneSpace()
	}
	return ok
}

// skipOneSpace steps over a single space, as indented JSON has after
// every colon, sparing the next read a call to skipSpace.
func (sc *Scanner) skipOneSpace() {
	if sc.p.s[sc.p.i] == ' ' {
		sc.p.i++
	}
}

// Elem moves to the next element of the array being read. It returns
// false after reading the closing bracket (or on failure).
func (sc *Scanner) Elem() bool { return sc.more(']') }

// more reads the separator before the next member or element, or the
// closer. When it reports true, the next byte is not white space.
func (sc *Scanner) more(closer byte) bool {
	c := sc.next()
	first := sc.opened
	sc.opened = false
	switch {
	case c == closer:
		sc.p.i++
		return false
	case first && c != 0:
		return true
	case c == ',':
		sc.p.i++
		if sc.next() != 0 {
			return true
		}
	}
	sc.Stop()
	return false
}

// Skip reads over one value of any kind, checking its syntax.
func (sc *Scanner) Skip() { sc.skip(0) }

func (sc *Scanner) skip(depth int) {
	if depth > maxDepth-16 {
		sc.Stop()
		return
	}
	k, ok := sc.Peek()
	switch {
	case !ok:
		sc.Stop()
	case k == Object:
		sc.Object()
		for {
			if _, ok := sc.Key(); !ok {
				return
			}
			sc.skip(depth + 1)
		}
	case k == Array:
		sc.Array()
		for sc.Elem() {
			sc.skip(depth + 1)
		}
	case k == String:
		sc.Str()
	case k == Int:
		sc.Number()
	case k == Null:
		if !sc.Null() {
			sc.Stop()
		}
	default:
		sc.Bool()
	}
}
