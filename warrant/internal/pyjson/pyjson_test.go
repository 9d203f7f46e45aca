package pyjson

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The expected strings in this file were printed by CPython 3.11 (repr,
// str and json.dumps); they are the oracle, not output of this package.

func TestFloatRepr(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{0.1, "0.1"}, {1.0, "1.0"}, {1e16, "1e+16"}, {1e-05, "1e-05"},
		{1.5e300, "1.5e+300"}, {1.2345678901234568e+17, "1.2345678901234568e+17"},
		{0.0001, "0.0001"}, {0.00015000000000000001, "0.00015000000000000001"},
		{math.Copysign(0, -1), "-0.0"}, {2.5, "2.5"}, {1e22, "1e+22"},
		{9007199254740992.0, "9007199254740992.0"}, {0.30000000000000004, "0.30000000000000004"},
		{100.0, "100.0"}, {1234567890123456.0, "1234567890123456.0"},
		{1.2345678901234568e+16, "1.2345678901234568e+16"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"},
	}
	for _, c := range cases {
		if got := FloatRepr(c.f); got != c.want {
			t.Errorf("FloatRepr(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

func TestStrRepr(t *testing.T) {
	cases := []struct{ in, want string }{
		{"abc", "'abc'"}, {"it's", `"it's"`}, {`say "hi"`, `'say "hi"'`},
		{`both ' and "`, `'both \' and "'`}, {"tab\there", `'tab\there'`}, {"nl\n", `'nl\n'`},
		{"\u007f", `'\x7f'`}, {"\u00e9", "'\u00e9'"}, {"\u00a0", `'\xa0'`},
		{"\u2028", `'\u2028'`}, {"Stra\u00dfe", "'Stra\u00dfe'"}, {"\U0001F600", "'\U0001F600'"},
		{"\x00", `'\x00'`}, {`a\b`, `'a\\b'`}, {"\u200b", `'\u200b'`},
	}
	for _, c := range cases {
		if got := StrRepr(c.in); got != c.want {
			t.Errorf("StrRepr(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestStrOfDecodedValues(t *testing.T) {
	cases := []struct{ json, want string }{
		{`[1, "a", null, true]`, "[1, 'a', None, True]"},
		{`{"k": [1.0, {}]}`, "{'k': [1.0, {}]}"},
		{`[]`, "[]"}, {`{}`, "{}"}, {`1e+16`, "1e+16"}, {`"x"`, "x"},
		{`-0`, "0"}, {`12`, "12"}, {`1.50`, "1.5"}, {`1E400`, "inf"},
		{`{"a": 1, "a": 2}`, "{'a': 2}"},
		{`"\ud800"`, `\ud800`},
	}
	for _, c := range cases {
		v, err := Parse(c.json)
		if err != nil {
			t.Fatalf("Parse(%s): %v", c.json, err)
		}
		got := Str(v)
		if c.json == `"\ud800"` {
			got = StrRepr(got)
			c.want = `'\ud800'`
		}
		if got != c.want {
			t.Errorf("str(%s) = %q, want %q", c.json, got, c.want)
		}
	}
}

func TestAppendStringMatchesJSONDumps(t *testing.T) {
	got := string(AppendString(nil, "\u00e9\U0001F600\n\""))
	if want := `"\u00e9\ud83d\ude00\n\""`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestParseRefusesWhatPythonRefuses(t *testing.T) {
	bad := []string{
		``, `NaN`, `Infinity`, `-Infinity`, `{"a": NaN}`, `[1,]`, `{"a":1,}`, `01`, `1.`, `.5`,
		`"raw` + "\n" + `newline"`, `"\x"`, `"\u12"`, `[1 2]`, `{"a" 1}`, `{1: 2}`, `"a" "b"`,
		"\xff", `tru`, `[`,
	}
	for _, s := range bad {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted; Python's json.loads refuses it", s)
		}
	}
	good := []string{` {"a": [1, 2.5e3, -0, true, null, "\u00e9"]} `, `"\ud83d\ude00"`, `-1E-2`, "\t[]\n"}
	for _, s := range good {
		if _, err := Parse(s); err != nil {
			t.Errorf("Parse(%q): %v", s, err)
		}
	}
}

func TestParseDepthLimit(t *testing.T) {
	deep := ""
	for i := 0; i < 5000; i++ {
		deep += "["
	}
	if _, err := Parse(deep); err == nil {
		t.Fatal("5000 nested arrays accepted")
	}
}

// FuzzParse: never panic, and agree with encoding/json on what is JSON
// (except that Go accepts invalid UTF-8 inside strings and we do not).
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud800"`, `1e400`, `[true,false]`, `{"a":1,"a":2}`, `[-0.5e-7, 1E+2, 0.0]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err == nil {
			_ = Str(v)
			numbersRead(t, v)
		}
		if err == nil && !json.Valid([]byte(s)) {
			t.Fatalf("we accept %q but it is not JSON", s)
		}
	})
}

// numbersRead fails unless every number literal in v is one that
// strconv.ParseFloat reads (out of range is fine: Python gives inf).
func numbersRead(t *testing.T, v Value) {
	switch v.Kind() {
	case Int, Float:
		if _, err := strconv.ParseFloat(v.Str(), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			t.Fatalf("number %q: %v", v.Str(), err)
		}
	case Array:
		v.Elems(func(_ int, el Value) bool { numbersRead(t, el); return true })
	case Object:
		for it := v.Iter(); ; {
			_, val, ok := it.Next()
			if !ok {
				break
			}
			numbersRead(t, val)
		}
	}
}

// Layout never changes a document: the same value indented with every
// width from 0 to 20 spaces (and tabs, CRLF) reads back identically.
func TestWhitespaceLayout(t *testing.T) {
	base := map[string]any{"a": []any{"x y  z", 1.5, map[string]any{"b": "        eight spaces inside"}}, "c": nil}
	want, _ := Parse(`{"a": ["x y  z", 1.5, {"b": "        eight spaces inside"}], "c": null}`)
	for width := 0; width <= 20; width++ {
		indent := ""
		for i := 0; i < width; i++ {
			indent += " "
		}
		for _, nl := range []string{"\n", "\r\n\t"} {
			b, _ := json.MarshalIndent(base, nl, indent)
			v, err := Parse(string(b))
			if err != nil {
				t.Fatalf("width %d: %v\n%s", width, err, b)
			}
			if Str(v) != Str(want) {
				t.Fatalf("width %d: got %s, want %s", width, Str(v), Str(want))
			}
		}
	}
}

// Strings of every length up to 40 with a special byte at every position
// are scanned exactly (the eight-byte fast path must not skip past one).
func TestStringScanBoundaries(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for pos := 0; pos < n; pos++ {
			for _, special := range []string{`\"`, `\\`, `\n`, `\u0041`} {
				body := make([]byte, 0, n+6)
				for i := 0; i < n; i++ {
					if i == pos {
						body = append(body, special...)
						continue
					}
					body = append(body, 'a'+byte(i%26))
				}
				doc := `"` + string(body) + `"`
				var ref string
				if err := json.Unmarshal([]byte(doc), &ref); err != nil {
					t.Fatal(err)
				}
				v, err := Parse(doc)
				if err != nil || v.Str() != ref {
					t.Fatalf("%s: got %q, %v; want %q", doc, v.Str(), err, ref)
				}
			}
			raw := `"` + strings.Repeat("a", pos) + "\x01" + `"`
			if _, err := Parse(raw); err == nil {
				t.Fatalf("raw control byte at %d accepted", pos)
			}
		}
	}
}

// Members keeps each key once, at its first position, with its last value,
// on either side of the size where it starts to index the keys.
func TestMembersRepeatedKeys(t *testing.T) {
	for _, n := range []int{3, smallObject, smallObject + 1, 100} {
		var b strings.Builder
		b.WriteByte('{')
		for i := 0; i < n; i++ {
			b.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i) + `,`)
		}
		// Repeat the first and the last key with new values.
		b.WriteString(`"k0":-1,"k` + strconv.Itoa(n-1) + `":-2}`)
		v, err := Parse(b.String())
		if err != nil {
			t.Fatal(err)
		}
		m := v.Members()
		if len(m) != n || m[0].Key != "k0" || m[0].Val.Str() != "-1" || m[n-1].Val.Str() != "-2" || m[1].Val.Str() != "1" {
			t.Errorf("%d keys: got %d members, first %s=%s, last %s=%s", n, len(m), m[0].Key, m[0].Val.Str(), m[n-1].Key, m[n-1].Val.Str())
		}
	}
}

// An object with many keys (an adapter_meta within the default view size)
// costs time in proportion to its keys: found by a scan alone, 200,000
// keys took about a minute.
func TestMembersManyKeysLinear(t *testing.T) {
	var b strings.Builder
	b.WriteByte('{')
	const n = 200_000
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":0`)
	}
	b.WriteByte('}')
	v, err := Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if got := len(v.Members()); got != n {
		t.Fatalf("%d members, want %d", got, n)
	}
	// Well under a second; the bound leaves room for a loaded machine.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Members of %d keys took %v", n, d)
	}
}
