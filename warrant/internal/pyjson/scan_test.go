package pyjson

import (
	"strings"
	"testing"
)

// NameIs takes exactly the name it was given, whatever its length and
// wherever the member sits, and leaves the scanner where Name would.
func TestNameIs(t *testing.T) {
	for n := 1; n <= 30; n++ {
		name := strings.Repeat("n", n-1) + "e"
		nd := NewNeedle(name)
		for _, tail := range []string{`1}`, `1, "other": [1, 2, 3], "more": "text text text"}`} {
			for _, doc := range []struct {
				text string
				hit  bool
			}{
				{`{"` + name + `":` + tail, true},
				{`{"` + name + `x":` + tail, false},
				{`{"` + name[:n-1] + `f":` + tail, false},
				{`{"` + name + `" :` + tail, false}, // legal, but not written plainly
				{`{"x` + name + `":` + tail, false},
			} {
				var sc Scanner
				sc.Reset(doc.text + "\x00")
				if !sc.Object() || !sc.Member() {
					t.Fatalf("%q: no member", doc.text)
				}
				if got := sc.NameIs(&nd); got != doc.hit {
					t.Errorf("NameIs(%q) on %q = %v", name, doc.text, got)
				}
				if !doc.hit {
					sc.Name()
				}
				if lit, _ := sc.Number(); lit != "1" || sc.Failed() {
					t.Errorf("%q: after the name, read %q (failed %v)", doc.text, lit, sc.Failed())
				}
			}
		}
	}
}

// The scanner reads what Parse reads and stops on what Parse refuses.
func FuzzScannerSkip(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5e3, "x\n", {"b": null}], "c": true}`, `[]`, `"\ud800"`, "{\n  \"a\":\t1\r\n}", `{"a":1,}`, "[1]\x00", "\"\xff\"", "{\"a\xc3\":1}", "[\"\xe2\x82\xac\\n\"]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var sc Scanner
		sc.Reset(s + "\x00")
		sc.Skip()
		scanned := sc.End()
		_, err := Parse(s)
		if scanned != (err == nil) {
			t.Fatalf("%q: scanner read it %v, Parse error %v", s, scanned, err)
		}
	})
}
