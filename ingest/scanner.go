package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ewp-go/ewp/warrant"
)

// defaultMaxViewBytes is the per-view bound when none is given.
func defaultMaxViewBytes() int { return warrant.DefaultLimits.MaxViewBytes }

// scanner finds JSON value boundaries in a text held in memory: one view's,
// for topLevel. (Inputs are read by the streaming splitter.) It checks only what it needs to
// find them (strings, bracket nesting); the kernel's parser validates each
// value's text. It is fast on large inputs because strings, which are
// most of the bytes, are skipped with IndexByte.
type scanner struct {
	data []byte
	pos  int
	line int
}

func (s *scanner) eof() bool { return s.pos >= len(s.data) }

func (s *scanner) peek() byte {
	if s.eof() {
		return 0
	}
	return s.data[s.pos]
}

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", s.line, fmt.Sprintf(format, args...))
}

// space skips JSON white space, counting lines.
func (s *scanner) space() {
	for !s.eof() {
		switch s.data[s.pos] {
		case '\n':
			s.line++
		case ' ', '\t', '\r':
		default:
			return
		}
		s.pos++
	}
}

// value returns the next value's text; the scanner stands after it.
func (s *scanner) value() (Item, error) {
	start, line := s.pos, s.line
	var err error
	switch c := s.peek(); c {
	case '{', '[':
		err = s.nested()
	case '"':
		err = s.str()
	case 0:
		return Item{}, s.errorf("unexpected end of input; expected a value")
	case ',', ':', ']', '}':
		return Item{}, s.errorf("unexpected %q; expected a value", c)
	default:
		if !s.scalar() {
			return Item{}, s.errorf("unexpected %q; expected a value", c)
		}
	}
	if err != nil {
		return Item{}, err
	}
	return Item{Raw: s.data[start:s.pos], Line: line, Index: -1}, nil
}

// nested skips an object or array, matching brackets.
func (s *scanner) nested() error {
	var stack []byte
	for !s.eof() {
		switch c := s.data[s.pos]; c {
		case '"':
			if err := s.str(); err != nil {
				return err
			}
			continue
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != match(c) {
				return s.errorf("unexpected %q", c)
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				s.pos++
				return nil
			}
		case '\n':
			s.line++
		}
		s.pos++
	}
	return s.errorf("unexpected end of input inside an unclosed %q", stack[len(stack)-1])
}

func match(closer byte) byte {
	if closer == '}' {
		return '{'
	}
	return '['
}

// str skips a string literal, honouring backslash escapes.
func (s *scanner) str() error {
	start, line := s.pos, s.line
	s.pos++
	for {
		i := bytes.IndexByte(s.data[s.pos:], '"')
		if i < 0 {
			s.line = line
			return s.errorf("unterminated string")
		}
		s.pos += i
		if !escaped(s.data[start+1 : s.pos]) {
			s.pos++
			s.line += bytes.Count(s.data[start:s.pos], []byte{'\n'})
			return nil
		}
		s.pos++
	}
}

// escaped reports whether the quote after b is escaped: an odd run of
// backslashes ends b.
func escaped(b []byte) bool {
	n := 0
	for i := len(b) - 1; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// scalar skips a number or literal up to the next delimiter; false when
// there is none to skip.
func (s *scanner) scalar() bool {
	start := s.pos
	for !s.eof() {
		switch s.data[s.pos] {
		case ',', ']', '}', ':', ' ', '\t', '\r', '\n', '{', '[', '"':
			return s.pos > start
		}
		s.pos++
	}
	return s.pos > start
}

type member struct {
	raw  []byte
	line int
}

// topLevel returns the raw values of an object's top-level keys (the last
// one wins for a repeated key, as in Python's json).
func topLevel(obj []byte) (map[string]member, error) {
	s := &scanner{data: obj, line: 1}
	out := map[string]member{}
	s.pos++ // '{'
	s.space()
	if s.peek() == '}' {
		return out, nil
	}
	for {
		s.space()
		if s.peek() != '"' {
			return nil, s.errorf("expected a string key")
		}
		keyItem, err := s.value()
		if err != nil {
			return nil, err
		}
		var key string
		if err := json.Unmarshal(keyItem.Raw, &key); err != nil {
			return nil, s.errorf("bad key %s", keyItem.Raw)
		}
		s.space()
		if s.peek() != ':' {
			return nil, s.errorf("expected ':' after key %q", key)
		}
		s.pos++
		s.space()
		v, err := s.value()
		if err != nil {
			return nil, fmt.Errorf("%q: %w", key, err)
		}
		out[key] = member{v.Raw, v.Line}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			return out, nil
		default:
			return nil, s.errorf("expected ',' or '}' after the value of %q", key)
		}
	}
}
