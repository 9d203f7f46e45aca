package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		format Format
		raws   []string
		lines  []int
		index  []int
	}{
		{"single view", "  {\"proposition_id\": \"P\"}\n", FormatView, []string{`{"proposition_id": "P"}`}, []int{1}, []int{-1}},
		{"list", "[\n {\"a\": 1},\n {\"b\": [1, {\"c\": \"]\"}]}\n]", FormatList,
			[]string{`{"a": 1}`, `{"b": [1, {"c": "]"}]}`}, []int{2, 3}, []int{0, 1}},
		{"empty list", " [ ] ", FormatList, nil, nil, nil},
		{"envelope", "{\"note\": \"x\",\n \"views\": [\n  {\"p\": 1},\n  {\"p\": 2}]}", FormatEnvelope,
			[]string{`{"p": 1}`, `{"p": 2}`}, []int{3, 4}, []int{0, 1}},
		{"jsonl", "{\"p\": 1}\n\n{\"p\": \"a\\\"}{\"}\n{\"p\": 3}\n", FormatLines,
			[]string{`{"p": 1}`, `{"p": "a\"}{"}`, `{"p": 3}`}, []int{1, 3, 4}, []int{-1, -1, -1}},
		{"graph", `{"graph": {"name": "fs"}, "primitives": []}`, FormatGraph,
			[]string{`{"graph": {"name": "fs"}, "primitives": []}`}, []int{1}, []int{-1}},
		{"escaped backslash before quote", `{"p": "a\\"}`, FormatView, []string{`{"p": "a\\"}`}, []int{1}, []int{-1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, items, err := Split([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if f != c.format || len(items) != len(c.raws) {
				t.Fatalf("format %s with %d items, want %s with %d", f, len(items), c.format, len(c.raws))
			}
			for i, it := range items {
				if string(it.Raw) != c.raws[i] || it.Line != c.lines[i] || it.Index != c.index[i] {
					t.Errorf("item %d = %q line %d index %d, want %q line %d index %d",
						i, it.Raw, it.Line, it.Index, c.raws[i], c.lines[i], c.index[i])
				}
			}
		})
	}
}

func TestSplitErrors(t *testing.T) {
	cases := map[string]string{
		"":                        "empty",
		"   \n ":                  "empty",
		"nope":                    "starts with",
		"[{\"a\": 1} {\"b\": 2}]": "expected ',' or ']'",
		"[{\"a\": 1},":            "end of input",
		"{\"a\": [1}":             "unexpected '}'",
		"{\"a\": \"x":             "unterminated string",
		"[1] x":                   "after the end of the list",
		"{\"views\": 3}":          `"views" must be a list`,
		"{\"a\": 1}\n]":           "unexpected ']'",
		"{\"a\": 1}\n{\"b\": 1":   "line 2",
		"\xff\xfe{\x00":           "UTF-16 byte-order mark (FF FE)",
		"\xef\xbb\xbf{}":          "UTF-8 byte-order mark",
		"\x00\x00":                "line 1, column 1 (byte offset 0): NUL byte",
		"{\"a\": 1}\n{\"b\" 1}\n": "line 2, column 6 (byte offset 14): unexpected '1'; expected ':'",
		"{\n \"a\": 1\n},\n":      "line 3, column 2 (byte offset 11): a ',' after a view's closing '}': a file of one view ends there",
	}
	for in, want := range cases {
		_, _, err := Split([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Split(%q) error %v, want it to contain %q", in, err, want)
		}
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		`{"proposition_id": "P"}`, `[{"a": 1}, {"b": [2]}]`, `{"views": [{"a": "\"]"}]}`,
		"{\"a\": 1}\n{\"b\": 2}\n", `{"graph": {}, "primitives": []}`, `[`, `{"a": "\\`, "[1,]", "{}{}[]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		format, items, err := Split(data)
		// Oracle: the splitter refuses no JSON text encoding/json accepts,
		// but for its own rules ("views" must be a list, given once; a
		// top-level value must be an object or a list; nesting bound).
		trimmed := bytes.TrimSpace(data)
		if err != nil && json.Valid(data) && len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') &&
			!bytes.Contains(data, []byte("views")) && !bytes.Contains(data, []byte(`\u`)) && bytes.Count(data, []byte("[")) < 900 && bytes.Count(data, []byte("{")) < 900 {
			t.Fatalf("Split refused valid JSON %q: %v", data, err)
		}
		if err != nil {
			return
		}
		for _, it := range items {
			if len(it.Raw) == 0 || it.Line < 1 {
				t.Fatalf("empty item or bad line: %+v", it)
			}
		}
		// Oracle: on valid JSON lists the splitter agrees with encoding/json.
		var list []json.RawMessage
		if format == FormatList && json.Unmarshal(data, &list) == nil {
			if len(list) != len(items) {
				t.Fatalf("%d items, encoding/json sees %d", len(items), len(list))
			}
			for i := range list {
				if !bytes.Equal(list[i], items[i].Raw) {
					t.Fatalf("item %d = %q, encoding/json %q", i, items[i].Raw, list[i])
				}
			}
		}
	})
}

// Each form of input is read element by element: a view is emitted as
// soon as its text is complete, while the rest of the input has not been
// written yet.
func TestSplitReaderEmitsBeforeTheEnd(t *testing.T) {
	cases := map[string][2]string{
		"list":     {`[{"a": 1},`, ` {"b": 2}]`},
		"envelope": {`{"note": "x", "views": [{"a": 1},`, ` {"b": 2}], "more": true}`},
		"jsonl":    {"{\"a\": 1}\n{\"a\": 2}\n", "{\"b\": 2}\n"},
	}
	for name, parts := range cases {
		t.Run(name, func(t *testing.T) {
			pr, pw := io.Pipe()
			got := make(chan Item, 10)
			done := make(chan error, 1)
			go func() {
				_, err := SplitReader(pr, SplitOptions{}, func(it Item) error { got <- it; return nil })
				done <- err
			}()
			go io.WriteString(pw, parts[0]) //nolint:errcheck // checked by what arrives
			select {
			case it := <-got:
				if string(it.Raw) != `{"a": 1}` {
					t.Fatalf("first item %q", it.Raw)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("the first view was not emitted before the input ended")
			}
			go func() { io.WriteString(pw, parts[1]); pw.Close() }() //nolint:errcheck // as above
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A view over the byte bound is read through, not kept, and splitting
// goes on after it.
func TestSplitReaderTooLarge(t *testing.T) {
	big := `{"p": "` + strings.Repeat("x", 5000) + `"}`
	var items []Item
	f, err := SplitReader(strings.NewReader("[{\"a\": 1}, "+big+", {\"b\": 2}]"), SplitOptions{MaxViewBytes: 1000}, func(it Item) error {
		items = append(items, it)
		return nil
	})
	if err != nil || f != FormatList || len(items) != 3 {
		t.Fatalf("%s, %d items, %v", f, len(items), err)
	}
	if !items[1].TooLarge || items[1].Raw != nil || items[1].Size != int64(len(big)) || items[2].TooLarge || string(items[2].Raw) != `{"b": 2}` {
		t.Fatalf("items %+v", items[1:])
	}
}

// Nesting is bounded, so a stream of '[' cannot grow the splitter's stack
// without end.
func TestSplitReaderNestingBound(t *testing.T) {
	_, _, err := Split([]byte(strings.Repeat("[", 5000)))
	if err == nil || !strings.Contains(err.Error(), "nested deeper than 1000") {
		t.Fatalf("%v", err)
	}
}

// A lone view is kept only up to the view bound; a graph document, from
// its "graph" or "primitives" member on, up to the graph bound.
func TestSplitReaderFirstObjectBounds(t *testing.T) {
	pad := strings.Repeat("x", 3000)
	var got []Item
	emit := func(it Item) error { got = append(got, it); return nil }
	if _, err := SplitReader(strings.NewReader(`{"p": "`+pad+`"}`), SplitOptions{MaxViewBytes: 1000, MaxGraphBytes: 5000}, emit); err != nil || len(got) != 1 || !got[0].TooLarge {
		t.Fatalf("view: %v %+v", err, got)
	}
	got = nil
	if _, err := SplitReader(strings.NewReader(`{"graph": "g", "primitives": ["`+pad+`"]}`), SplitOptions{MaxViewBytes: 1000, MaxGraphBytes: 5000}, emit); err != nil || len(got) != 1 || !got[0].Graph || got[0].Raw == nil {
		t.Fatalf("graph: %v %+v", err, got)
	}
}

// After a syntax error JSON Lines goes on at the next line that starts
// with '{', and the error says which lines it skipped (a want ending in
// \x00 is the whole end of the message: nothing was skipped).
func TestSplitReaderResync(t *testing.T) {
	cases := map[string]string{
		"{\"a\": 1}\n{garbage\n":                 "line 2, column 2 (byte offset 10): unexpected 'g'; expected a member name in double quotes\x00",
		"{\"a\": 1}\n{bad\n  more\n{\"b\": 2}\n": "(lines 2-3 skipped, up to the next line that starts with '{')",
		"{\"a\": 1}\n{bad\n  more":               "(lines 2-3 skipped",
	}
	for in, want := range cases {
		var errs []string
		n := 0
		_, err := SplitReader(strings.NewReader(in), SplitOptions{}, func(it Item) error {
			if it.Err != nil {
				errs = append(errs, it.Err.Error())
			} else {
				n++
			}
			return nil
		})
		if err != nil || len(errs) != 1 || !strings.Contains(errs[0]+"\x00", want) {
			t.Errorf("%q: %v %q, want %q", in, err, errs, want)
		}
		if strings.Contains(in, `"b"`) && n != 2 {
			t.Errorf("%q: %d views after the error, want the one after it too", in, n)
		}
	}
}

// TestSplitReaderIncompleteLine: a JSON Lines value left open at the end
// of its line (`{"x": `) is refused on its own line, and the view on the
// next line, which starts with '{', is read as the next view, not
// swallowed as the open value's member.
func TestSplitReaderIncompleteLine(t *testing.T) {
	in := "{\"a\": 1}\n{\"x\": \n{\"b\": 2}\n{\"c\": 3}\n"
	var lines []int
	var errs []*SyntaxError
	_, err := SplitReader(strings.NewReader(in), SplitOptions{}, func(it Item) error {
		if it.Err != nil {
			errs = append(errs, it.Err)
			return nil
		}
		lines = append(lines, it.Line)
		return nil
	})
	if err != nil || len(errs) != 1 {
		t.Fatalf("%v %v", err, errs)
	}
	if e := errs[0]; e.Line != 2 || !strings.Contains(e.Error(), "line 2") || !strings.Contains(e.Msg, "starts on line 2 is incomplete") || e.Skipped > e.Line {
		t.Errorf("error: %v (line %d, skipped %d)", e, e.Line, e.Skipped)
	}
	if fmt.Sprint(lines) != "[1 3 4]" {
		t.Errorf("views read on lines %v, want [1 3 4]", lines)
	}
	// Indented inner lines are a view's own: a multi-line view still reads.
	in = "{\"a\": 1}\n{\"b\": [\n  {\"c\": 3}\n]}\n"
	if _, items, err := Split([]byte(in)); err != nil || len(items) != 2 {
		t.Errorf("multi-line view: %v, %d items", err, len(items))
	}
}
