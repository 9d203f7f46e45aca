package pyjson

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

// SyntaxError reports where a document stops being JSON.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
// Python's own limit is about the same order (recursion limit 1000).
const maxDepth = 900

// Parse decodes one JSON document as Python's json.loads does, except that
// the non-standard NaN/Infinity literals are refused: they are not JSON.
// The text must be valid UTF-8. The result refers to s; s must not change.
func Parse(s string) (Value, error) {
	var p Parser
	return p.Parse(s)
}

// Parser parses documents one after another, reusing its memory. The
// Value a call returns is valid until the next call. The zero Parser is
// ready to use; it is not safe for concurrent use.
type Parser struct {
	t tape
}

// Parse is the package-level Parse, reusing p's memory.
func (pp *Parser) Parse(s string) (Value, error) {
	if len(s) > math.MaxInt32 {
		return Value{}, &SyntaxError{0, "document larger than 2 GiB"}
	}
	if !utf8.ValidString(s) {
		return Value{}, &SyntaxError{0, "text is not valid UTF-8"}
	}
	pp.t.src = s
	pp.t.escaped = pp.t.escaped[:0]
	if want := len(s)/12 + 4; cap(pp.t.nodes) < want {
		pp.t.nodes = make([]node, 0, want)
	}
	pp.t.nodes = pp.t.nodes[:0]
	p := parser{s: s, t: &pp.t}
	p.skipSpace()
	if err := p.value(0); err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return Value{}, p.fail("extra data after the JSON value")
	}
	return Value{p.t, 0}, nil
}

type parser struct {
	s string
	i int
	t *tape
}

func (p *parser) fail(msg string) error { return &SyntaxError{p.i, msg} }

// skipSpace is small enough to inline: most calls, in compact JSON
// always, find no white space at all and return at once.
func (p *parser) skipSpace() {
	if p.i < len(p.s) && p.s[p.i] > ' ' {
		return
	}
	p.skipSpaceRun()
}

func (p *parser) skipSpaceRun() {
	src, i := p.s, p.i
	b := bytesOf(src)
	// Indentation comes in runs: find the first byte that is not a space
	// eight bytes at a time; a line break or tab is stepped over.
	for i+8 <= len(b) {
		if x := load64(b, i) ^ spaces8; x != 0 {
			i += bits.TrailingZeros64(x) / 8
			if c := src[i]; c != '\n' && c != '\t' && c != '\r' {
				p.i = i
				return
			}
		}
		i++
	}
	for i < len(src) {
		switch src[i] {
		case ' ', '\n', '\t', '\r':
			i++
		default:
			p.i = i
			return
		}
	}
	p.i = i
}

// push appends a scalar node and returns its index.
func (p *parser) push(n node) int32 {
	idx := int32(len(p.t.nodes))
	n.end = idx + 1
	p.t.nodes = append(p.t.nodes, n)
	return idx
}

func (p *parser) value(depth int) error {
	if p.i >= len(p.s) {
		return p.fail("expecting a value")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.container(depth+1, Object)
	case c == '[':
		return p.container(depth+1, Array)
	case c == '"':
		n, err := p.str()
		p.push(n)
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case p.lit("true"):
		p.push(node{kind: Bool, b: true})
	case p.lit("false"):
		p.push(node{kind: Bool})
	case p.lit("null"):
		p.push(node{kind: Null})
	default:
		return p.fail("expecting a value")
	}
	return nil
}

func (p *parser) lit(word string) bool {
	if len(p.s)-p.i >= len(word) && p.s[p.i:p.i+len(word)] == word {
		p.i += len(word)
		return true
	}
	return false
}

// container parses an object or array; its node's n and end are filled in
// once the children are on the tape.
func (p *parser) container(depth int, kind Kind) error {
	if depth > maxDepth {
		return p.fail("nesting too deep")
	}
	closer := byte(']')
	if kind == Object {
		closer = '}'
	}
	idx := p.push(node{kind: kind})
	p.i++
	p.skipSpace()
	var n int32
	if p.i < len(p.s) && p.s[p.i] == closer {
		p.i++
	} else if err := p.children(depth, kind, closer, &n); err != nil {
		return err
	}
	p.t.nodes[idx].n = n
	p.t.nodes[idx].end = int32(len(p.t.nodes))
	return nil
}

func (p *parser) children(depth int, kind Kind, closer byte, n *int32) error {
	for {
		p.skipSpace()
		if kind == Object {
			if err := p.key(); err != nil {
				return err
			}
		}
		if err := p.value(depth); err != nil {
			return err
		}
		*n++
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == closer {
			p.i++
			return nil
		}
		return p.fail("expecting ',' or '" + string(closer) + "'")
	}
}

func (p *parser) key() error {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return p.fail("expecting a property name in double quotes")
	}
	k, err := p.str()
	if err != nil {
		return err
	}
	p.push(k)
	p.skipSpace()
	if p.i >= len(p.s) || p.s[p.i] != ':' {
		return p.fail("expecting ':' delimiter")
	}
	p.i++
	p.skipSpace()
	return nil
}

// number follows Python's json number grammar: an integer literal becomes
// an int (unbounded), anything with a fraction or exponent a float.
func (p *parser) number() error {
	start := p.i
	kind, err := p.scanNumber()
	if err != nil {
		return err
	}
	p.push(node{kind: kind, off: int32(start), ln: int32(p.i - start)})
	return nil
}

// scanNumber reads the number literal at p.i and tells whether it is an
// Int or a Float; the literal is p.s[start:p.i].
func (p *parser) scanNumber() (Kind, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i >= len(p.s) {
		return 0, p.fail("expecting a digit")
	}
	switch c := p.s[p.i]; {
	case c == '0':
		p.i++
	case c >= '1' && c <= '9':
		p.digits()
	default:
		return 0, p.fail("expecting a value")
	}
	kind := Int
	if p.i+1 < len(p.s) && p.s[p.i] == '.' && isDigit(p.s[p.i+1]) {
		p.i++
		p.digits()
		kind = Float
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		j := p.i + 1
		if j < len(p.s) && (p.s[j] == '+' || p.s[j] == '-') {
			j++
		}
		if j < len(p.s) && isDigit(p.s[j]) {
			p.i = j
			p.digits()
			kind = Float
		}
	}
	// The grammar above is a subset of what strconv.ParseFloat reads, so
	// Float() never meets a malformed literal (FuzzParse checks it).
	if p.i-start > 1<<20 {
		return 0, p.fail("number literal too long")
	}
	return kind, nil
}

func (p *parser) digits() {
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		p.i++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// str reads a string literal into a String node. Raw control characters
// are refused (Python's strict mode); escapes may produce lone surrogates,
// kept as WTF-8.
func (p *parser) str() (node, error) {
	start := p.i + 1
	text, esc, err := p.scanString()
	if err != nil {
		return node{}, err
	}
	if esc {
		p.t.escaped = append(p.t.escaped, text)
		return node{kind: String, esc: true, off: int32(len(p.t.escaped) - 1)}, nil
	}
	return node{kind: String, off: int32(start), ln: int32(len(text))}, nil
}

// scanString reads the string literal at p.i. Its text is a slice of the
// source unless the literal has escapes (esc), when it is a fresh copy.
func (p *parser) scanString() (text string, esc bool, err error) {
	p.i++ // opening quote
	start := p.i
	for p.i < len(p.s) {
		// Most bytes are plain text, skipped a word at a time; a byte of
		// a multi-byte character is stepped over here (the caller checks
		// UTF-8).
		p.i = skipPlain(p.s, p.i)
		if p.i >= len(p.s) {
			break
		}
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			return p.s[start : p.i-1], false, nil
		case c == '\\':
			text, err = p.strEscaped(start)
			return text, true, err
		case c < 0x20:
			return "", false, p.fail("invalid control character in string")
		}
		p.i++
	}
	return "", false, p.fail("unterminated string")
}

func (p *parser) strEscaped(start int) (string, error) {
	buf := []byte(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("invalid control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", p.fail("unterminated string")
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			var err error
			if buf, err = p.unicodeEscape(buf); err != nil {
				return "", err
			}
		default:
			p.i -= 2
			return "", p.fail("invalid \\escape")
		}
	}
	return "", p.fail("unterminated string")
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[p.i : p.i+4]) {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	p.i += 4
	return r, true
}

func (p *parser) unicodeEscape(buf []byte) ([]byte, error) {
	r, ok := p.hex4()
	if !ok {
		return nil, p.fail("invalid \\uXXXX escape")
	}
	if r >= 0xD800 && r <= 0xDBFF && p.i+6 <= len(p.s) && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
		save := p.i
		p.i += 2
		if lo, ok := p.hex4(); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return utf8.AppendRune(buf, 0x10000+(r-0xD800)<<10+(lo-0xDC00)), nil
		}
		p.i = save
	}
	return appendWTF8(buf, r), nil
}

// appendWTF8 encodes r like UTF-8 but lets a lone surrogate through as its
// three-byte form, so Python strings with surrogates survive a round trip.
func appendWTF8(buf []byte, r rune) []byte {
	if r >= 0xD800 && r <= 0xDFFF {
		return append(buf, 0xED, byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
	}
	return utf8.AppendRune(buf, r)
}

const (
	ones8   = 0x0101010101010101
	highs8  = 0x8080808080808080
	spaces8 = 0x2020202020202020
	quotes8 = 0x2222222222222222
	slash8  = 0x5c5c5c5c5c5c5c5c
)

// bytesOf views s as bytes, read-only (nothing writes through it), so
// that eight bytes load as one word.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// load64 reads b[i:i+8] as one little-endian word.
func load64(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i : i+8]) }

// skipPlain returns the index of the first byte at or after i that ends a
// run of plain ASCII string text: a quote, a backslash, a control
// character, or a byte of a multi-byte UTF-8 sequence. It tests eight
// bytes a step with the usual word tricks (a byte is zero, a byte is below
// 0x20); the lowest flagged byte is always a true one.
func skipPlain(s string, i int) int {
	b := bytesOf(s)
	for i+8 <= len(b) {
		w := load64(b, i)
		q, e := w^quotes8, w^slash8
		stop := (((q - ones8) &^ q) | ((e - ones8) &^ e) | ((w - spaces8) &^ w) | w) & highs8
		if stop != 0 {
			return i + bits.TrailingZeros64(stop)/8
		}
		i += 8
	}
	for i < len(s) && !stopByte[s[i]] {
		i++
	}
	return i
}

// stopByte marks the bytes that end a run of plain ASCII string text: the
// quote, the backslash, the control characters JSON forbids raw, and the
// bytes of multi-byte UTF-8 sequences.
var stopByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c < 0x20 || c >= 0x80 || c == '"' || c == '\\'
	}
	return t
}()
