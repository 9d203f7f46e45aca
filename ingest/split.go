package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Format is how an input lays out its views.
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
	// Raw is the value's exact text; nil when TooLarge or Err is set.
	Raw []byte
	// Line is the 1-based line the value starts on.
	Line int
	// Index is the position in a list or envelope; -1 otherwise.
	Index int
	// Size is the value's length in bytes.
	Size int64
	// TooLarge is set when Size is over SplitOptions.MaxViewBytes: the
	// text was read through, not kept.
	TooLarge bool
	// Err is a syntax error in a JSON Lines value; the splitter went on at
	// the next line that starts with '{'.
	Err *SyntaxError
	// Graph marks a concept-graph document (the input's only item).
	Graph bool
	// format is the input's format as known when the item was read (a
	// first view may turn out to start JSON Lines).
	format Format
}

// SyntaxError is input that is not JSON text, located by line, column
// (in bytes, 1-based) and byte offset from the start of the input.
type SyntaxError struct {
	Line, Column int
	Offset       int64
	Msg          string
	// Skipped is the last line a JSON Lines reader skipped to get past
	// the error; 0 when nothing was skipped.
	Skipped int
}

func (e *SyntaxError) Error() string {
	s := fmt.Sprintf("line %d, column %d (byte offset %d): %s", e.Line, e.Column, e.Offset, e.Msg)
	if e.Skipped > e.Line {
		s += fmt.Sprintf(" (lines %d-%d skipped, up to the next line that starts with '{')", e.Line, e.Skipped)
	}
	return s
}

// SplitOptions bound what splitting holds in memory.
type SplitOptions struct {
	// MaxViewBytes bounds one view's text; a longer one becomes a
	// TooLarge item. 0 means warrant.DefaultLimits.MaxViewBytes.
	MaxViewBytes int
	// MaxGraphBytes bounds a concept-graph document. 0 means
	// DefaultMaxGraphBytes.
	MaxGraphBytes int
}

// DefaultMaxGraphBytes bounds a concept-graph document, which is loaded
// whole: far above the demo graph (a few KB) and a 10,000-primitive one.
const DefaultMaxGraphBytes = 64 << 20

// maxNesting bounds bracket nesting, above the kernel's own bound (900),
// so the kernel's refusal is the one a view within it gets.
const maxNesting = 1000

// windowSize is the read buffer. The splitter holds it and at most one
// value's text, whatever the size of the input.
const windowSize = 256 << 10

// SplitReader reads the views of an input one at a time, in order, and
// calls emit with each as soon as its last byte has been read, so a
// pipeline's views are not held back until the end of the input. It
// checks the JSON grammar as it goes (not what the values mean: that is
// the kernel's part), so an error is located where it is, and it holds
// the read window and one value's text at most, whatever the input's
// size. The rules: first non-space byte '[' → a list; '{' → the first
// object decides: a "views" key makes an envelope, whose views list is
// read element by element; a "graph" or "primitives" key a graph
// document, returned whole as one item; otherwise it is a view, and more
// values after it make JSON Lines.
//
// A syntax error between or inside JSON Lines values becomes an item with
// Err, and splitting goes on at the next line that starts with '{'; any
// other syntax error ends splitting and is returned, as are read errors
// and emit's errors. The format is returned even then.
func SplitReader(r io.Reader, opt SplitOptions, emit func(Item) error) (Format, error) {
	if opt.MaxViewBytes <= 0 {
		opt.MaxViewBytes = defaultMaxViewBytes()
	}
	if opt.MaxGraphBytes <= 0 {
		opt.MaxGraphBytes = DefaultMaxGraphBytes
	}
	s := &splitter{r: r, buf: make([]byte, windowSize), line: 1, opt: opt, emit: emit}
	err := s.run()
	return s.format, err
}

// Split is SplitReader over an input held in memory, collecting its
// items; the first syntax error, of any kind, is returned.
func Split(data []byte) (Format, []Item, error) {
	var items []Item
	f, err := SplitReader(bytes.NewReader(data), SplitOptions{}, func(it Item) error {
		if it.Err != nil {
			return it.Err
		}
		items = append(items, it)
		return nil
	})
	return f, items, err
}

type splitter struct {
	r        io.Reader
	buf      []byte
	pos, end int
	base     int64 // input offset of buf[0]
	line     int
	lineOff  int64 // input offset of the current line's first byte
	rerr     error // io.EOF or the read error, once seen
	opt      SplitOptions
	emit     func(Item) error
	format   Format
	depth    int
	// inLines is set while JSON Lines values after the first are read,
	// from line valueLine; cut, when a line that starts with '{'
	// interrupted one of them: the input then reads as ended until resync.
	inLines   bool
	valueLine int
	cut       *SyntaxError
	// capture of the current value's text
	capOn   bool
	capFrom int   // buf position where the uncopied captured bytes start
	capAt   int64 // input offset where the capture started
	capMax  int
	capOver bool
	capBuf  []byte
}

// send emits an item, noting the format known so far.
func (s *splitter) send(it Item) error {
	it.format = s.format
	return s.emit(it)
}

// offset is the input offset of the next byte.
func (s *splitter) offset() int64 { return s.base + int64(s.pos) }

// more makes sure a byte is available; false at the end of the input.
func (s *splitter) more() bool {
	return s.cut == nil && (s.pos < s.end || s.fill())
}

func (s *splitter) fill() bool {
	if s.rerr != nil {
		return false
	}
	if s.capOn {
		s.keep(s.buf[s.capFrom:s.end])
		s.capFrom = 0
	}
	s.base += int64(s.end)
	s.pos, s.end = 0, 0
	for s.end == 0 && s.rerr == nil {
		s.end, s.rerr = s.r.Read(s.buf)
	}
	return s.end > 0
}

// readErr is the error that ended the input early, if any.
func (s *splitter) readErr() error {
	if s.rerr == nil || errors.Is(s.rerr, io.EOF) {
		return nil
	}
	return fmt.Errorf("reading the input: %w", s.rerr)
}

func (s *splitter) errorf(format string, args ...any) *SyntaxError {
	off := s.offset()
	return &SyntaxError{Line: s.line, Column: int(off-s.lineOff) + 1, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// unexpected describes the byte at the current position (or the end of
// the input) where want was expected.
func (s *splitter) unexpected(want string) error {
	if s.cut != nil {
		return s.cut
	}
	if err := s.readErr(); err != nil {
		return err
	}
	if !s.more() {
		return s.errorf("unexpected end of input; expected %s", want)
	}
	c := s.buf[s.pos]
	switch {
	case c == 0:
		return s.errorf("NUL byte: not JSON text (binary data, or a device such as /dev/zero?)")
	case c == 0xEF && s.bomAhead():
		return s.errorf("a UTF-8 byte-order mark (EF BB BF); JSON text must not carry one: remove it")
	case (c == 0xFF || c == 0xFE) && s.pos+1 < s.end && s.buf[s.pos+1] == 0xFF^0xFE^c:
		return s.errorf("a UTF-16 byte-order mark (%02X %02X): the text is UTF-16; convert it to UTF-8 (e.g. iconv -f UTF-16 -t UTF-8)", c, s.buf[s.pos+1])
	case c >= 0x20 && c < 0x7f:
		return s.errorf("unexpected %q; expected %s", c, want)
	}
	return s.errorf("unexpected byte 0x%02X; expected %s", c, want)
}

// bomAhead reports whether the window holds EF BB BF at the position.
func (s *splitter) bomAhead() bool {
	return bytes.HasPrefix(s.buf[s.pos:s.end], []byte{0xEF, 0xBB, 0xBF})
}

// advance consumes n bytes of the window, counting lines.
func (s *splitter) advance(n int) {
	seg := s.buf[s.pos : s.pos+n]
	if k := bytes.Count(seg, []byte{'\n'}); k > 0 {
		s.line += k
		s.lineOff = s.base + int64(s.pos+bytes.LastIndexByte(seg, '\n')+1)
	}
	s.pos += n
}

// space skips JSON white space. Inside a JSON Lines value, a line that
// starts with '{' is the next view (resync's rule too): the value is cut
// there, so an incomplete view is reported on its own line and does not
// swallow the view after it.
func (s *splitter) space() {
	for s.more() {
		switch s.buf[s.pos] {
		case '\n':
			if s.inLines && s.depth > 0 {
				s.newline()
				continue
			}
			s.advance(1)
		case ' ', '\t', '\r':
			s.pos++
		default:
			return
		}
	}
}

// newline consumes a newline inside a JSON Lines value, and cuts the
// value when the next line starts with '{'.
func (s *splitter) newline() {
	end := s.errorf("the view that starts on line %d is incomplete at the end of line %d: line %d starts with '{', a new view "+
		"(in JSON Lines, the lines of a view after its first must not start with '{')", s.valueLine, s.line, s.line+1)
	s.advance(1)
	if s.more() && s.buf[s.pos] == '{' {
		s.cut = end
	}
}

func (s *splitter) peek() byte {
	if !s.more() {
		return 0
	}
	return s.buf[s.pos]
}

// startCapture begins keeping the text of the value at the position.
func (s *splitter) startCapture(max int) {
	s.capOn, s.capFrom, s.capAt, s.capMax, s.capOver, s.capBuf = true, s.pos, s.offset(), max, false, nil
}

// keep appends captured bytes, or drops the capture once it is over its
// bound: the value is still read through, only not kept.
func (s *splitter) keep(b []byte) {
	switch {
	case s.capOver:
	case len(s.capBuf)+len(b) > s.capMax:
		s.capOver, s.capBuf = true, nil
	default:
		s.capBuf = append(s.capBuf, b...)
	}
}

// endCapture returns the captured text (nil when over its bound) and the
// value's size.
func (s *splitter) endCapture() ([]byte, int64) {
	s.keep(s.buf[s.capFrom:s.pos])
	s.capOn = false
	raw := s.capBuf
	s.capBuf = nil
	if s.capOver {
		raw = nil
	}
	return raw, s.offset() - s.capAt
}

func (s *splitter) run() error {
	s.space()
	if err := s.readErr(); err != nil {
		return err
	}
	if !s.more() {
		return s.errorf("input is empty; expected an EvidenceView object, a list, {\"views\": [...]} or JSON Lines")
	}
	switch s.buf[s.pos] {
	case '[':
		s.format = FormatList
		return s.list("", true)
	case '{':
		return s.objects()
	}
	const want = "'{' (a view, an envelope or JSON Lines) or '[' (a list of views)"
	if c := s.buf[s.pos]; c >= 0x20 && c < 0x7f {
		return s.errorf("input starts with %q; expected %s", c, want)
	}
	return s.unexpected(want)
}

// item reads one value as an item: kept when it fits maxBytes.
func (s *splitter) item(index int, maxBytes int) (Item, error) {
	it := Item{Line: s.line, Index: index}
	s.startCapture(maxBytes)
	err := s.value()
	it.Raw, it.Size = s.endCapture()
	if err != nil {
		return it, err
	}
	it.TooLarge = it.Raw == nil
	return it, nil
}

// list reads a list's elements as items; top says whether it is the whole
// input (nothing but white space may follow it).
func (s *splitter) list(name string, top bool) error {
	s.pos++ // '['
	s.space()
	if s.peek() == ']' {
		s.pos++
		return s.after(top, "list")
	}
	for i := 0; ; i++ {
		s.space()
		it, err := s.item(i, s.opt.MaxViewBytes)
		if err != nil {
			return fmt.Errorf("%s[%d]: %w", name, i, err)
		}
		if err := s.send(it); err != nil {
			return err
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return s.after(top, "list")
		default:
			return s.unexpected(fmt.Sprintf("',' or ']' after %slist element %d", name, i))
		}
	}
}

// after refuses anything but white space after the input's only value.
func (s *splitter) after(top bool, what string) error {
	if !top {
		return nil
	}
	s.space()
	if err := s.readErr(); err != nil {
		return err
	}
	if s.more() {
		return s.errorf("unexpected text after the end of the %s", what)
	}
	return nil
}

// objects reads an input that starts with '{': the first object tells a
// view (maybe the first of JSON Lines), an envelope and a graph apart.
func (s *splitter) objects() error {
	s.format = FormatView
	it, kind, err := s.first()
	var se *SyntaxError
	switch {
	case errors.As(err, &se) && kind == FormatView:
		it.Raw, it.Err = nil, s.resync(se)
		if err := s.send(it); err != nil {
			return err
		}
		return s.lines()
	case err != nil:
		return err
	case kind == FormatEnvelope:
		return s.after(true, "envelope")
	case kind == FormatGraph:
		return s.graph(it)
	}
	if it.Size > int64(s.opt.MaxViewBytes) {
		it.Raw, it.TooLarge = nil, true
	}
	if err := s.send(it); err != nil {
		return err
	}
	return s.lines()
}

// first reads the first object. Its members are looked at as they come:
// a "views" list is streamed element by element (the envelope is never
// held whole); anything else is kept, up to the view bound, or the graph
// bound from a "graph" or "primitives" member on, and is a view or a
// graph document.
func (s *splitter) first() (Item, Format, error) {
	it := Item{Line: s.line, Index: -1}
	kind := FormatView
	s.startCapture(s.opt.MaxViewBytes)
	err := s.members(func(key string) (bool, error) {
		switch {
		case key == "views" && kind == FormatEnvelope:
			return true, s.errorf(`"views" appears twice in the envelope; give one list`)
		case key == "views":
			if s.peek() != '[' {
				return true, s.errorf(`"views" must be a list of EvidenceView objects`)
			}
			kind, s.format = FormatEnvelope, FormatEnvelope
			s.capOn, s.capBuf = false, nil
			return true, s.list("views", false)
		case key == "graph" || key == "primitives":
			if kind == FormatView {
				kind = FormatGraph
				s.capMax = max(s.capMax, s.opt.MaxGraphBytes) // a graph document is loaded whole
			}
		}
		return false, nil
	})
	if kind == FormatEnvelope {
		return it, kind, err
	}
	it.Raw, it.Size = s.endCapture()
	if err != nil && kind == FormatGraph {
		kind = FormatView // a broken graph document is reported like a broken view
	}
	return it, kind, err
}

// graph emits a graph document, which must be alone in its input.
func (s *splitter) graph(it Item) error {
	if it.Raw == nil {
		return fmt.Errorf("line %d: the concept-graph document is %d bytes, over the %d-byte bound for a graph loaded whole", it.Line, it.Size, s.opt.MaxGraphBytes)
	}
	if err := s.after(true, "concept-graph document (a graph document must be alone in its input)"); err != nil {
		return err
	}
	s.format = FormatGraph
	it.Graph = true
	return s.send(it)
}

// lines reads the values after the first object as JSON Lines.
func (s *splitter) lines() error {
	for {
		s.space()
		if err := s.readErr(); err != nil {
			return err
		}
		if !s.more() {
			return nil
		}
		if s.format != FormatLines && s.peek() == ',' { // a single view's trailing comma, not a bad line among JSON Lines
			return s.errorf("a ',' after a view's closing '}': a file of one view ends there (remove the comma); several views go in a list [...] or one per line (JSON Lines), with no commas between them")
		}
		s.format = FormatLines
		s.inLines, s.valueLine = true, s.line
		it, err := s.item(-1, s.opt.MaxViewBytes)
		var se *SyntaxError
		if errors.As(err, &se) {
			it.Raw, it.Err = nil, s.resync(se)
		} else if err != nil {
			return err
		}
		if err := s.send(it); err != nil {
			return err
		}
	}
}

// resync skips to the next line that starts with '{' after a syntax
// error in JSON Lines: the next view, if the input is JSON Lines (an
// indented view's inner objects do not start in column 1).
func (s *splitter) resync(se *SyntaxError) *SyntaxError {
	s.depth, s.cut = 0, nil
	for s.more() {
		if s.offset() == s.lineOff && s.buf[s.pos] == '{' {
			break
		}
		i := bytes.IndexByte(s.buf[s.pos:s.end], '\n')
		if i < 0 {
			s.pos = s.end
			continue
		}
		s.advance(i + 1)
	}
	se.Skipped = s.line - 1 // the line before the next view's
	if !s.more() && s.offset() > s.lineOff {
		se.Skipped = s.line // the input ends inside its last line
	}
	return se
}

// value reads one JSON value.
func (s *splitter) value() error {
	if !s.more() {
		return s.unexpected("a value")
	}
	switch c := s.buf[s.pos]; {
	case c == '{':
		return s.members(nil)
	case c == '[':
		return s.elements()
	case c == '"':
		_, err := s.str(false)
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.unexpected("a value")
}

func (s *splitter) nest() error {
	s.depth++
	if s.depth > maxNesting {
		return s.errorf("brackets nested deeper than %d levels", maxNesting)
	}
	return nil
}

// members reads an object. onKey, when set, is called after each member
// name and its ':' with the name; it returns true when it has read the
// value itself.
func (s *splitter) members(onKey func(key string) (bool, error)) error {
	if err := s.nest(); err != nil {
		return err
	}
	s.pos++ // '{'
	s.space()
	if s.peek() == '}' {
		s.pos++
		s.depth--
		return nil
	}
	for {
		s.space()
		if s.peek() != '"' {
			return s.unexpected("a member name in double quotes")
		}
		key, err := s.str(onKey != nil)
		if err != nil {
			return err
		}
		s.space()
		if s.peek() != ':' {
			return s.unexpected("':' after a member name")
		}
		s.pos++
		s.space()
		done := false
		if onKey != nil {
			done, err = onKey(key)
		}
		if err == nil && !done {
			err = s.value()
		}
		if err != nil {
			return err
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			s.depth--
			return nil
		default:
			return s.unexpected("',' or '}' after a member's value")
		}
	}
}

// elements reads an array.
func (s *splitter) elements() error {
	if err := s.nest(); err != nil {
		return err
	}
	s.pos++ // '['
	s.space()
	if s.peek() == ']' {
		s.pos++
		s.depth--
		return nil
	}
	for {
		s.space()
		if err := s.value(); err != nil {
			return err
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			s.depth--
			return nil
		default:
			return s.unexpected("',' or ']' after an array element")
		}
	}
}

// maxKeyKept bounds the member names str keeps: only short names ("views",
// "graph", "primitives") are ever compared, and only in the first object.
const maxKeyKept = 64

// str reads a string literal, checking its escapes (the kernel checks the
// rest). With keep it returns the decoded string when it is short (""
// otherwise).
func (s *splitter) str(keep bool) (string, error) {
	line, off, lineOff := s.line, s.offset(), s.lineOff
	s.pos++ // opening quote
	var kept []byte
	keepBytes := func(b []byte) {
		if keep && len(kept) <= maxKeyKept {
			kept = append(kept, b[:min(len(b), maxKeyKept+1-len(kept))]...)
		}
	}
	for {
		if !s.more() {
			if err := s.readErr(); err != nil {
				return "", err
			}
			return "", &SyntaxError{Line: line, Column: int(off-lineOff) + 1, Offset: off, Msg: "unterminated string: the input ends inside it"}
		}
		seg := s.buf[s.pos:s.end]
		q := bytes.IndexByte(seg, '"')
		if q < 0 {
			q = len(seg)
		}
		n := q
		b := bytes.IndexByte(seg[:q], '\\')
		if b >= 0 {
			n = b
		}
		keepBytes(seg[:n])
		s.advance(n)
		switch {
		case b >= 0:
			esc, err := s.escape()
			if err != nil {
				return "", err
			}
			keepBytes(append([]byte{'\\'}, esc...))
		case q < len(seg):
			s.pos++ // closing quote
			if len(kept) > maxKeyKept {
				return "", nil
			}
			return unquote(kept), nil
		}
	}
}

// escape reads a backslash escape and returns what followed the
// backslash.
func (s *splitter) escape() ([]byte, error) {
	s.pos++ // '\'
	if !s.more() {
		return nil, s.unexpected("an escape after '\\'")
	}
	c := s.buf[s.pos]
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos++
		return []byte{c}, nil
	case 'u':
		s.pos++
		out := []byte{'u'}
		for range 4 {
			if !s.more() || !isHex(s.buf[s.pos]) {
				return nil, s.unexpected("four hex digits after \\u")
			}
			out = append(out, s.buf[s.pos])
			s.pos++
		}
		return out, nil
	}
	return nil, s.unexpected(`an escape (\" \\ \/ \b \f \n \r \t or \uXXXX) after '\'`)
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// unquote decodes a kept member name's escapes.
func unquote(kept []byte) string {
	if bytes.IndexByte(kept, '\\') < 0 {
		return string(kept)
	}
	var out string
	if json.Unmarshal(append(append([]byte{'"'}, kept...), '"'), &out) != nil {
		return "" // a lone surrogate escape: not a name that matters here
	}
	return out
}

// number reads a number's characters; the kernel checks its form.
func (s *splitter) number() error {
	for s.more() {
		switch c := s.buf[s.pos]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			s.pos++
		default:
			return s.delimited("a number")
		}
	}
	return s.readErr()
}

// literal reads true, false or null.
func (s *splitter) literal(word string) error {
	for i := range len(word) {
		if !s.more() || s.buf[s.pos] != word[i] {
			return s.unexpected(fmt.Sprintf("%q (a value starting with %q)", word, word[0]))
		}
		s.pos++
	}
	return s.delimited(word)
}

// delimited refuses a scalar that runs into something that cannot end it.
func (s *splitter) delimited(what string) error {
	if !s.more() {
		return s.readErr()
	}
	switch s.buf[s.pos] {
	case ' ', '\t', '\r', '\n', ',', ']', '}':
		return nil
	}
	return s.unexpected("white space, ',', ']' or '}' after " + what)
}
