// Package termtext makes text someone else wrote safe to print on an
// operator's terminal. A decision log or a ledger holds strings an agent
// chose (kinds, ids, names, notes); printed raw, a backspace rewrites
// what the line seems to say, a newline forges a row, an escape sequence
// retitles the window or moves the cursor, and a bidi override reverses
// a word. Every command that prints such content passes each string
// through Escape (text output) or JSON (JSON output), so what an operator
// reads is what was stored, visibly.
package termtext

import (
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character a terminal would act on or that
// hides or reorders text made visible, and nothing else changed:
//
//   - C0 controls and DEL as \n, \r, \t or \xNN;
//   - C1 controls (U+0080–U+009F), Unicode format characters (bidi
//     overrides and isolates, zero-width characters, the BOM) and the line
//     and paragraph separators as \uXXXX (\UXXXXXXXX above the BMP);
//   - each byte of invalid UTF-8 as \xNN;
//   - a backslash as \\, so an escape shown is never one the text spelled.
//
// Text without any of these is returned as it is, without allocating.
func Escape(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeHex(&b, `\x`, uint32(s[i]), 2)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			writeHex(&b, `\x`, uint32(r), 2)
		case unsafeRune(r) && r > 0xffff:
			writeHex(&b, `\U`, uint32(r), 8)
		case unsafeRune(r):
			writeHex(&b, `\u`, uint32(r), 4)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Printable reports whether s is valid UTF-8 without any character
// Escape makes visible but the backslash: what a name given on a command
// line must be before it is recorded.
func Printable(s string) bool {
	return firstUnsafe(strings.ReplaceAll(s, `\`, "")) < 0
}

// firstUnsafe is the index of the first byte Escape changes, or -1.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || c == '\\' {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeRune reports a non-ASCII rune a terminal acts on or that hides or
// reorders text: C1 controls, format characters (Cf: bidi controls,
// zero-width characters, soft hyphen, BOM), line and paragraph separators.
func unsafeRune(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}

const hexDigits = "0123456789abcdef"

func writeHex(b *strings.Builder, prefix string, v uint32, digits int) {
	b.WriteString(prefix)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(v>>uint(shift))&0xf])
	}
}

// JSON returns encoded JSON (as encoding/json writes it: control
// characters below U+0020 and invalid UTF-8 already escaped) with the
// characters it leaves raw that Escape would not: DEL, C1 controls, format
// characters and the separators, as \uXXXX escapes (a surrogate pair
// above the BMP). Outside strings JSON has only ASCII, so the rewrite
// changes no value: the output decodes to exactly what the input did.
func JSON(b []byte) []byte {
	i := firstUnsafeJSON(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if r == 0x7f || (r >= utf8.RuneSelf && unsafeRune(r)) {
			out = appendJSONEscape(out, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

func firstUnsafeJSON(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			if b[i] == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

func appendJSONEscape(dst []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		dst = appendU(dst, 0xd800+(r>>10))
		return appendU(dst, 0xdc00+(r&0x3ff))
	}
	return appendU(dst, r)
}

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// JSONWriter returns a writer that passes what is written to w through
// JSON. Each Write must hold whole characters, as json.Encoder's do (one
// whole value per Write).
func JSONWriter(w io.Writer) io.Writer { return jsonWriter{w} }

type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
