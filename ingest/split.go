package ingest

import (
	"encoding/json"
	"fmt"
)

// Format is how an input file lays out its views.
type Format string

// Input formats ewp-ingest accepts.
const (
	FormatView     Format = "view"     // one EvidenceView (or fixture document)
	FormatList     Format = "list"     // [view, view, ...]
	FormatEnvelope Format = "envelope" // {"views": [...], ...}
	FormatLines    Format = "jsonl"    // one view per line (any run of JSON values)
	FormatGraph    Format = "graph"    // {"graph": ..., "primitives": [...]}
)

// Item is one view's JSON text inside an input, with where it came from.
type Item struct {
	Raw []byte
	// Line is the 1-based line the value starts on.
	Line int
	// Index is the position in a list or envelope; -1 otherwise.
	Index int
}

// Split finds the views in an input without decoding them: it only finds
// value boundaries, so the kernel's parser sees each view's exact text
// (and is the one that refuses bad JSON inside a view). The rules:
// first non-space byte '[' → a list; '{' → read the first value: a
// "views" key makes an envelope, a "graph" or "primitives" key a graph
// document (returned whole, as one item), more values after it make JSON
// Lines, otherwise it is a single view.
func Split(data []byte) (Format, []Item, error) {
	s := &scanner{data: data, line: 1}
	s.space()
	switch s.peek() {
	case '[':
		items, err := s.list()
		return FormatList, items, err
	case '{':
		return s.objects()
	case 0:
		return "", nil, s.errorf("input is empty; expected an EvidenceView object, a list, {\"views\": [...]} or JSON Lines")
	default:
		return "", nil, s.errorf("input starts with %q; expected '{' (a view, an envelope or JSON Lines) or '[' (a list of views)", s.peek())
	}
}

// objects handles inputs that start with '{'.
func (s *scanner) objects() (Format, []Item, error) {
	first, err := s.value()
	if err != nil {
		return "", nil, err
	}
	s.space()
	if s.eof() {
		return s.single(first)
	}
	items := []Item{first}
	for !s.eof() {
		it, err := s.value()
		if err != nil {
			return FormatLines, nil, err
		}
		items = append(items, it)
		s.space()
	}
	return FormatLines, items, nil
}

// single classifies a lone object by its top-level keys.
func (s *scanner) single(first Item) (Format, []Item, error) {
	keys, err := topLevel(first.Raw)
	if err != nil {
		return "", nil, fmt.Errorf("line %d: %w", first.Line, err)
	}
	if raw, ok := keys["views"]; ok {
		inner := &scanner{data: raw.raw, line: first.Line + raw.line - 1}
		if inner.peek() != '[' {
			return FormatEnvelope, nil, inner.errorf("\"views\" must be a list of EvidenceView objects")
		}
		items, err := inner.list()
		return FormatEnvelope, items, err
	}
	_, graph := keys["graph"]
	_, prims := keys["primitives"]
	if graph || prims {
		return FormatGraph, []Item{first}, nil
	}
	return FormatView, []Item{first}, nil
}

// list splits a JSON array into its elements.
func (s *scanner) list() ([]Item, error) {
	s.pos++ // '['
	var items []Item
	s.space()
	if s.peek() == ']' {
		s.pos++
		return items, s.trailing()
	}
	for {
		s.space()
		it, err := s.value()
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", len(items), err)
		}
		it.Index = len(items)
		items = append(items, it)
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return items, s.trailing()
		default:
			return nil, s.errorf("after list element %d: expected ',' or ']'", len(items)-1)
		}
	}
}

// trailing refuses anything but white space after the closing bracket.
func (s *scanner) trailing() error {
	s.space()
	if !s.eof() {
		return s.errorf("unexpected text after the end of the list")
	}
	return nil
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
