package pyjson

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
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
// The text must be valid UTF-8.
func Parse(s string) (Value, error) {
	if !utf8.ValidString(s) {
		return Value{}, &SyntaxError{0, "text is not valid UTF-8"}
	}
	p := parser{s: s}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return Value{}, p.fail("extra data after the JSON value")
	}
	return v, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) fail(msg string) error { return &SyntaxError{p.i, msg} }

func (p *parser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (Value, error) {
	if p.i >= len(p.s) {
		return Value{}, p.fail("expecting a value")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, err := p.str()
		return Value{Kind: String, Str: s}, err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case p.lit("true"):
		return Value{Kind: Bool, Bool: true}, nil
	case p.lit("false"):
		return Value{Kind: Bool}, nil
	case p.lit("null"):
		return Value{}, nil
	}
	return Value{}, p.fail("expecting a value")
}

func (p *parser) lit(word string) bool {
	if len(p.s)-p.i >= len(word) && p.s[p.i:p.i+len(word)] == word {
		p.i += len(word)
		return true
	}
	return false
}

func (p *parser) object(depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, p.fail("nesting too deep")
	}
	p.i++ // {
	v := Value{Kind: Object}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return v, nil
	}
	for {
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return Value{}, p.fail("expecting a property name in double quotes")
		}
		key, err := p.str()
		if err != nil {
			return Value{}, err
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return Value{}, p.fail("expecting ':' delimiter")
		}
		p.i++
		p.skipSpace()
		val, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		v.Obj = setMember(v.Obj, key, val)
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return v, nil
		}
		return Value{}, p.fail("expecting ',' or '}'")
	}
}

func setMember(obj []Member, key string, val Value) []Member {
	for i := range obj {
		if obj[i].Key == key {
			obj[i].Val = val
			return obj
		}
	}
	return append(obj, Member{key, val})
}

func (p *parser) array(depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, p.fail("nesting too deep")
	}
	p.i++ // [
	v := Value{Kind: Array}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		v.Arr = []Value{}
		return v, nil
	}
	for {
		p.skipSpace()
		el, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		v.Arr = append(v.Arr, el)
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return v, nil
		}
		return Value{}, p.fail("expecting ',' or ']'")
	}
}

// number follows Python's json number grammar: an integer literal becomes
// an int (unbounded), anything with a fraction or exponent a float
// (overflowing to ±inf as float() does).
func (p *parser) number() (Value, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i >= len(p.s) {
		return Value{}, p.fail("expecting a digit")
	}
	switch c := p.s[p.i]; {
	case c == '0':
		p.i++
	case c >= '1' && c <= '9':
		p.digits()
	default:
		return Value{}, p.fail("expecting a value")
	}
	isFloat := false
	if p.i+1 < len(p.s) && p.s[p.i] == '.' && isDigit(p.s[p.i+1]) {
		p.i++
		p.digits()
		isFloat = true
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		j := p.i + 1
		if j < len(p.s) && (p.s[j] == '+' || p.s[j] == '-') {
			j++
		}
		if j < len(p.s) && isDigit(p.s[j]) {
			p.i = j
			p.digits()
			isFloat = true
		}
	}
	text := p.s[start:p.i]
	if !isFloat {
		return Value{Kind: Int, Str: text, Float: intFloat(text)}, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return Value{}, p.fail("bad number")
	}
	return Value{Kind: Float, Float: f, Str: text}, nil
}

func intFloat(text string) float64 {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return math.Inf(1)
	}
	return f
}

func (p *parser) digits() {
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		p.i++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// str reads a string literal. Raw control characters are refused (Python's
// strict mode); escapes may produce lone surrogates, kept as WTF-8.
func (p *parser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '"' {
			s := p.s[start:p.i]
			p.i++
			return s, nil
		}
		if c == '\\' {
			return p.strEscaped(start)
		}
		if c < 0x20 {
			return "", p.fail("invalid control character in string")
		}
		p.i++
	}
	return "", p.fail("unterminated string")
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
	n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
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
