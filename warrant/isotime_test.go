package warrant

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// isoCase is one hand-picked input. want is the instant as RFC 3339 UTC
// with microseconds, or "" when the input is not a parseable instant.
// Every expectation was confirmed with python3 (3.11.7) as
// datetime.fromisoformat(s.strip().replace("Z", "+00:00")), naive = UTC.
type isoCase struct {
	name, in, want string
}

var isoGrammarCases = []isoCase{
	// Dates.
	{"extended date", "2026-09-21", "2026-09-21T00:00:00.000000Z"},
	{"basic date", "20260921", "2026-09-21T00:00:00.000000Z"},
	{"week date", "2026-W38", "2026-09-14T00:00:00.000000Z"},
	{"week date with day", "2026-W38-7", "2026-09-20T00:00:00.000000Z"},
	{"basic week date", "2026W38", "2026-09-14T00:00:00.000000Z"},
	{"basic week date with day", "2026W387", "2026-09-20T00:00:00.000000Z"},
	{"week 53 in a year starting Thursday", "2026-W53", "2026-12-28T00:00:00.000000Z"},
	{"week 53 in a leap year starting Wednesday", "2020-W53", "2020-12-28T00:00:00.000000Z"},
	{"week date crossing into next year", "2026-W53-7", "2027-01-03T00:00:00.000000Z"},
	{"first representable week date", "0001-W01-1", "0001-01-01T00:00:00.000000Z"},
	{"last representable week date", "9999-W52-5", "9999-12-31T00:00:00.000000Z"},
	{"leap day", "2024-02-29", "2024-02-29T00:00:00.000000Z"},
	{"400-year leap day", "2000-02-29", "2000-02-29T00:00:00.000000Z"},
	{"first day", "0001-01-01", "0001-01-01T00:00:00.000000Z"},

	// Times.
	{"hour", "2026-09-21T10", "2026-09-21T10:00:00.000000Z"},
	{"hour minute", "2026-09-21T10:30", "2026-09-21T10:30:00.000000Z"},
	{"hour minute second", "2026-09-21T10:30:15", "2026-09-21T10:30:15.000000Z"},
	{"basic hhmm", "2026-09-21T1030", "2026-09-21T10:30:00.000000Z"},
	{"basic hhmmss", "2026-09-21T103015", "2026-09-21T10:30:15.000000Z"},
	{"fraction dot", "2026-09-21T10:30:15.5", "2026-09-21T10:30:15.500000Z"},
	{"fraction comma", "2026-09-21T10:30:15,25", "2026-09-21T10:30:15.250000Z"},
	{"fraction micro", "2026-09-21T10:30:15.123456", "2026-09-21T10:30:15.123456Z"},
	{"fraction truncated not rounded", "2026-09-21T10:30:15.9999999", "2026-09-21T10:30:15.999999Z"},
	{"fraction very long", "2026-09-21T10:30:15.1234567890123", "2026-09-21T10:30:15.123456Z"},
	{"fraction on minutes", "2026-09-21T12:30.25", "2026-09-21T12:30:00.250000Z"},
	{"fraction on hour is micro", "2026-09-21T12.5", "2026-09-21T12:00:00.500000Z"},
	{"third colon starts fraction", "2026-09-21T12:00:00:123", "2026-09-21T12:00:00.123000Z"},
	{"basic fraction without dot", "2026-09-21T12000056", "2026-09-21T12:00:00.560000Z"},
	{"basic date basic time", "20260921T103015", "2026-09-21T10:30:15.000000Z"},
	{"week date with time", "2026-W38-1T12", "2026-09-14T12:00:00.000000Z"},
	{"last microsecond", "9999-12-31T23:59:59.999999", "9999-12-31T23:59:59.999999Z"},

	// Offsets and Z.
	{"Z", "2026-09-21T08:00:00Z", "2026-09-21T08:00:00.000000Z"},
	{"+HH:MM", "2026-09-21T10:00:00+02:00", "2026-09-21T08:00:00.000000Z"},
	{"+HHMM", "2026-09-21T10:00:00+0200", "2026-09-21T08:00:00.000000Z"},
	{"+HH", "2026-09-21T10:00:00+02", "2026-09-21T08:00:00.000000Z"},
	{"-HH:MM", "2026-09-21T03:30:00-05:30", "2026-09-21T09:00:00.000000Z"},
	{"+HH:MM:SS", "2026-09-21T10:00:00+05:30:15", "2026-09-21T04:29:45.000000Z"},
	{"+HH:MM:SS.ffffff", "2026-09-21T10:00:00+00:00:01.5", "2026-09-21T09:59:58.500000Z"},
	{"offset fraction on hour", "2026-09-21T10:00+01.5", "2026-09-21T08:59:59.500000Z"},
	{"offset minutes unchecked", "2026-09-21T10:00+00:99", "2026-09-21T08:21:00.000000Z"},
	{"zero offset drops micros", "2026-09-21T10:00+00:00:00.5", "2026-09-21T10:00:00.000000Z"},
	{"negative zero offset drops micros", "2026-09-21T10:00-00:00:00.5", "2026-09-21T10:00:00.000000Z"},
	{"largest offset", "2026-09-21T10:00+23:59:59.999999", "2026-09-20T10:00:00.000001Z"},
	{"most negative offset", "2026-09-21T10:00-23:59:59.999999", "2026-09-22T09:59:59.999999Z"},
	{"offset before year 1", "0001-01-01T00:00+01:00", "0000-12-31T23:00:00.000000Z"},
	{"offset after year 9999", "9999-12-31T23:59:59.999999-23:59:59.999999", "10000-01-01T23:59:59.999998Z"},
	{"date then Z", "2026-09-21Z", "2026-09-21T00:00:00.000000Z"},
	{"plus taken as separator", "2026-09-21+01:00", "2026-09-21T01:00:00.000000Z"},
	{"minus taken as separator", "20260921-0130", "2026-09-21T01:30:00.000000Z"},

	// Separators.
	{"space separator", "2026-09-21 10:00", "2026-09-21T10:00:00.000000Z"},
	{"lowercase t", "2026-09-21t10:00", "2026-09-21T10:00:00.000000Z"},
	{"letter separator", "2026-09-21x10:00", "2026-09-21T10:00:00.000000Z"},
	{"digit separator", "2026-09-21510:00", "2026-09-21T10:00:00.000000Z"},
	{"NUL separator", "2026-09-21\x0010:00", "2026-09-21T10:00:00.000000Z"},
	{"2-byte separator", "2026-09-21é10:00", "2026-09-21T10:00:00.000000Z"},
	{"3-byte separator", "2026-09-21\u300010:00", "2026-09-21T10:00:00.000000Z"},
	{"4-byte separator", "2026-09-21\U0001F60010:00", "2026-09-21T10:00:00.000000Z"},
	{"basic week date digit separator", "2026W3812300", "2026-09-14T23:00:00.000000Z"},

	// White space (Python's str.strip set).
	{"ascii white space", " \t\n2026-09-21T10:00Z\r\v\f", "2026-09-21T10:00:00.000000Z"},
	{"separator controls", "\x1c\x1d2026-09-21T10:00Z\x1e\x1f", "2026-09-21T10:00:00.000000Z"},
	{"unicode spaces", "\u0085\u00a0\u16802026-09-21T10:00Z\u2000\u200a\u2028\u2029\u202f\u205f\u3000", "2026-09-21T10:00:00.000000Z"},

	// Leftovers CPython ignores.
	{"NUL after time", "2026-09-21T12:00:00\x00", "2026-09-21T12:00:00.000000Z"},
	{"text after NUL", "2026-09-21T12:00:00.123456\x00abc", "2026-09-21T12:00:00.123456Z"},
	{"NUL after minutes, then stripped space", "2026-09-21T10:00\x00 ", "2026-09-21T10:00:00.000000Z"},
	{"NUL after offset", "2026-09-21T12+01\x00", "2026-09-21T11:00:00.000000Z"},
	{"junk after hour before offset", "2026-09-21T12a+01:00", "2026-09-21T11:00:00.000000Z"},
	{"odd digit before offset", "2026-09-21T123+01:00", "2026-09-21T11:00:00.000000Z"},
	{"empty fraction before offset", "2026-09-21T12:00:00.+01:00", "2026-09-21T11:00:00.000000Z"},
	{"junk after long fraction before offset", "2026-09-21T12:00:00.1234567x+01:00", "2026-09-21T11:00:00.123456Z"},
}

var isoRefusalCases = []isoCase{
	{"empty", "", ""},
	{"only spaces", "   ", ""},
	{"year only", "2026", ""},
	{"short", "2026-9", ""},
	{"unpadded month", "2026-9-21", ""},
	{"mixed date separators", "2026-0921", ""},
	{"slashes", "2026/09/21", ""},
	{"signed year", "+2026-09-21", ""},
	{"year 0", "0000-01-01", ""},
	{"month 0", "2026-00-10", ""},
	{"month 13", "2026-13-01", ""},
	{"day 0", "2026-09-00", ""},
	{"April 31", "2026-04-31", ""},
	{"not a leap year", "2023-02-29", ""},
	{"century not leap", "1900-02-29", ""},
	{"week 0", "2026-W00", ""},
	{"week 53 in a 52-week year", "2025-W53", ""},
	{"week 54", "2026-W54", ""},
	{"weekday 0", "2026-W38-0", ""},
	{"weekday 8", "2026-W38-8", ""},
	{"ISO year 0", "0000-W52-7", ""},
	{"week date in year 10000", "9999-W52-6", ""},
	{"extended week basic day", "2026-W381", ""},
	{"week separator guess", "2026-W38-112:00", ""},
	{"basic week parity guess", "2026W381230", ""},
	{"digit separator eats the hour", "2026-09-2112:00", ""},
	{"empty time", "2026-09-21T", ""},
	{"one hour digit", "2026-09-21T1", ""},
	{"trailing colon", "2026-09-21T12:", ""},
	{"one minute digit", "2026-09-21T12:0", ""},
	{"trailing dot", "2026-09-21T12:00:00.", ""},
	{"odd basic digit", "2026-09-21T123", ""},
	{"mixed time separators", "2026-09-21T12:3045", ""},
	{"basic then colon", "2026-09-21T1230:45", ""},
	{"junk in fraction", "2026-09-21T12:00:00.12ab", ""},
	{"junk after long fraction", "2026-09-21T12:00:00.1234567x", ""},
	{"hour 24", "2026-09-21T24:00", ""},
	{"minute 60", "2026-09-21T23:60", ""},
	{"leap second", "2026-09-21T23:59:60", ""},
	{"no time before offset", "2026-09-21T+01:00", ""},
	{"one-digit offset", "2026-09-21T12:00+1", ""},
	{"offset 24h", "2026-09-21T12:00+24:00", ""},
	{"offset -24h", "2026-09-21T12:00-24:00", ""},
	{"offset 23:60", "2026-09-21T12:00+23:60", ""},
	{"trailing colon in offset", "2026-09-21T12:00+01:00:", ""},
	{"two offsets", "2026-09-21T12:00+01:00+01:00", ""},
	{"double Z", "2026-09-21T12:00:00ZZ", ""},
	{"lowercase z", "2026-09-21T12:00:00z", ""},
	{"zero width space is not white space", "\u200b2026-09-21", ""},
	{"BOM is not white space", "\ufeff2026-09-21", ""},
	{"NUL is not white space", "\x002026-09-21", ""},
	{"Arabic-Indic digits", "\u0662\u0660\u0662\u0666-09-21", ""},
	{"fullwidth digits", "\uff12\uff10\uff12\uff16-09-21", ""},
	{"invalid UTF-8 at end", "2026-09-21T12:00\xff", ""},
	{"invalid UTF-8 at start", "\xff2026-09-21", ""},
	{"invalid UTF-8 after fraction", "2026-09-21T12:00:00.1234567\xff+01:00", ""},
	// json.loads keeps a lone surrogate and CPython accepts it as the
	// separator; pyjson carries it as WTF-8, so it must parse too.
	{"WTF-8 surrogate separator", "2026-09-21\xed\xa0\x8012:00", "2026-09-21T12:00:00.000000Z"},
}

func TestParseInstantTable(t *testing.T) {
	for _, tables := range [][]isoCase{isoGrammarCases, isoRefusalCases} {
		for _, c := range tables {
			got, ok := ParseInstant(c.in)
			switch {
			case c.want == "" && ok:
				t.Errorf("%s: ParseInstant(%q) = %v, want refusal", c.name, c.in, got)
			case c.want != "" && !ok:
				t.Errorf("%s: ParseInstant(%q) refused, want %s", c.name, c.in, c.want)
			case ok && got.String() != c.want:
				t.Errorf("%s: ParseInstant(%q) = %v, want %s", c.name, c.in, got, c.want)
			}
		}
	}
}

func TestParseInstantComparesInstants(t *testing.T) {
	same := []string{
		"2026-09-21T08:00:00Z",
		"2026-09-21T10:00:00+02:00",
		"2026-09-21T03:00:00-05",
		"2026-09-21T08:00:00",
		" 20260921T0800Z ",
		"2026-W39-1T08:00+00:00",
	}
	want, _ := ParseInstant(same[0])
	for _, s := range same[1:] {
		if got, ok := ParseInstant(s); !ok || got != want {
			t.Errorf("ParseInstant(%q) = %v, %v; want %v", s, got, ok, want)
		}
	}
	earlier, _ := ParseInstant("2026-09-21T09:59:59.999999+02:00")
	if d := want.Sub(earlier); d != 1 {
		t.Errorf("Sub = %d, want 1", d)
	}
}

func TestInstantString(t *testing.T) {
	cases := []struct {
		t    Instant
		want string
	}{
		{0, "0001-01-01T00:00:00.000000Z"},
		{-1, "0000-12-31T23:59:59.999999Z"},
		// 2026-09-21T08:00:00Z, from python3: (dt - datetime(1,1,1)) // µs.
		{63_925_574_400_000_000, "2026-09-21T08:00:00.000000Z"},
		{315_537_897_599_999_999, "9999-12-31T23:59:59.999999Z"},
	}
	for _, c := range cases {
		if got := c.t.String(); got != c.want {
			t.Errorf("Instant(%d).String() = %s, want %s", int64(c.t), got, c.want)
		}
	}
}

// isoOracleFile is testdata/isotime_cases.json. It was generated by a
// python3 script run against CPython 3.11.7 (the reference), not from this
// package's output: "us" is Python's instant in microseconds since
// 0001-01-01T00:00:00Z, or null when Python refuses; "py" is Python's
// isoformat() or error message, for humans.
type isoOracleFile struct {
	Oracle string `json:"oracle"`
	Cases  []struct {
		In string `json:"in"`
		US *int64 `json:"us"`
		Py string `json:"py"`
	} `json:"cases"`
}

func TestParseInstantOracle(t *testing.T) {
	raw, err := os.ReadFile("testdata/isotime_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var f isoOracleFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 300 {
		t.Fatalf("oracle file has only %d cases", len(f.Cases))
	}
	for _, c := range f.Cases {
		got, ok := ParseInstant(c.In)
		switch {
		case c.US == nil && ok:
			t.Errorf("ParseInstant(%q) = %d, Python refused (%s)", c.In, int64(got), c.Py)
		case c.US != nil && (!ok || int64(got) != *c.US):
			t.Errorf("ParseInstant(%q) = %d, %v; Python %d (%s)", c.In, int64(got), ok, *c.US, c.Py)
		}
	}
}

func BenchmarkParseInstant(b *testing.B) {
	inputs := []struct{ name, in string }{
		{"RFC3339Z", "2026-09-21T08:00:00Z"},
		{"RFC3339Offset", "2026-09-21T10:00:00+02:00"},
		{"RFC3339MicroZ", "2026-09-21T08:00:00.123456Z"},
		{"Naive", "2026-09-21T08:00:00"},
		{"WeekDate", "2026-W38-1T08:00"},
		{"Refused", "not a timestamp at all"},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := ParseInstant(in.in); ok != (in.name != "Refused") {
					b.Fatal("unexpected result")
				}
			}
		})
	}
}

// isoQuick agrees with the full port on a sweep of dates, clocks and
// offsets, valid and not, and takes every valid one of its shape.
func TestIsoQuickAgrees(t *testing.T) {
	taken := 0
	for y := 0; y <= 10000; y += 97 {
		for m := 0; m <= 13; m++ {
			for _, d := range []int{0, 1, 28, 29, 30, 31, 32} {
				for _, clock := range []string{"00:00:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60"} {
					for _, zone := range []string{"", "Z", "+00:00", "-23:59", "+24:00", "+01:60", "+0100", "z"} {
						s := fmt.Sprintf("%04d-%02d-%02dT%s%s", y, m, d, clock, zone)
						quick, ok := isoQuick(s)
						full, fullOK := isoFull(s)
						if ok && (!fullOK || quick != full) {
							t.Fatalf("%q: quick %v, full %v %v", s, quick, full, fullOK)
						}
						quickShape := !strings.Contains(clock, "60") && !strings.HasPrefix(clock, "24") &&
							(zone == "" || zone == "Z" || zone == "+00:00" || zone == "-23:59")
						if fullOK && !ok && quickShape {
							t.Errorf("%q: quick path declined a valid instant", s)
						}
						if ok {
							taken++
						}
					}
				}
			}
		}
	}
	if taken == 0 {
		t.Fatal("quick path took nothing")
	}
}
