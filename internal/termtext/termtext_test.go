package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	cases := []struct{ in, want string }{
		{"read_status", "read_status"},
		{"", ""},
		{"délai ✓ 漢字 🙂", "délai ✓ 漢字 🙂"},
		// backspaces that would make delete_all_backups read as read_status
		{"delete_all_backups\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\b\bread_status", `delete_all_backups` + strings.Repeat(`\x08`, 18) + `read_status`},
		{"a\nb\rc\td", `a\nb\rc\td`},
		{"\x1b]0;owned\x07", `\x1b]0;owned\x07`},
		{"x\x7fy", `x\x7fy`},
		{"\u009b31m", `\u009b31m`},
		{"abc\u202edcb", `abc\u202edcb`},
		{"\u2066x\u2069", `\u2066x\u2069`},
		{"zero\u200bwidth\ufeff", `zero\u200bwidth\ufeff`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"tag\U000E0041", `tag\U000e0041`},
		{"bad\xff\xfeutf8", `bad\xff\xfeutf8`},
		{"half\xe2\x80", `half\xe2\x80`},
		{`C:\temp`, `C:\\temp`},
		{`\x1b`, `\\x1b`}, // the text spelled an escape: shown as spelled
	}
	for _, c := range cases {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestEscapeLeavesNothingActive: whatever the input, the output is valid
// UTF-8 with no control, format or separator character in it.
func TestEscapeLeavesNothingActive(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		all.WriteRune(r)
	}
	all.WriteString("\xff\xc0\x80\U000E0001\U0010FFFF")
	out := Escape(all.String())
	if !utf8.ValidString(out) {
		t.Fatal("output is not valid UTF-8")
	}
	for _, r := range out {
		if r < 0x20 || r == 0x7f || unsafeRune(r) {
			t.Fatalf("output keeps %U", r)
		}
	}
}

func TestJSONDecodesToTheSameValue(t *testing.T) {
	in := map[string]string{"kind": "a\u202eb\u0085c\x7fd\U000E0041e\u200b", "plain": "ok ✓"}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := JSON(raw)
	for _, r := range string(out) {
		if r == 0x7f || unsafeRune(r) {
			t.Fatalf("JSON output keeps %U: %s", r, out)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if back["kind"] != in["kind"] || back["plain"] != in["plain"] {
		t.Fatalf("decoded %q, want %q", back, in)
	}
	if !bytes.Contains(out, []byte(`\u202e`)) || !bytes.Contains(out, []byte(`\udb40\udc41`)) {
		t.Fatalf("escapes missing: %s", out)
	}
	if plain := []byte(`{"a":"ok"}`); &JSON(plain)[0] != &plain[0] {
		t.Error("clean JSON was copied")
	}
}

func TestJSONWriter(t *testing.T) {
	var b bytes.Buffer
	if err := json.NewEncoder(JSONWriter(&b)).Encode("x\u202ey"); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "\"x\\u202ey\"\n" {
		t.Fatalf("got %q", got)
	}
}

func TestPrintable(t *testing.T) {
	for s, want := range map[string]bool{
		"Ada Lovelace": true, `dom\ops`: true, "Zoë": true,
		"": true, "a\nb": false, "a\x1b[2J": false, "\u202eevil": false, "x\xff": false, "a\tb": false,
	} {
		if got := Printable(s); got != want {
			t.Errorf("Printable(%q) = %v, want %v", s, got, want)
		}
	}
}
