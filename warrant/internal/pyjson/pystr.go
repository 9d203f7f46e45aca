package pyjson

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Str returns Python's str() of the decoded value: the reference
// normalises id, text and timestamp fields this way, so 1 and "1" are the
// same id and [1] becomes the text "[1]".
func Str(v Value) string {
	switch v.Kind() {
	case String:
		return v.Str()
	case Int:
		return IntText(v.Str())
	}
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

// IntText is the decimal text Python prints for the integer literal s
// ("-0" reads as 0).
func IntText(s string) string {
	if s == "-0" {
		return "0"
	}
	return s
}

func writeRepr(b *strings.Builder, v Value) {
	switch v.Kind() {
	case Null:
		b.WriteString("None")
	case Bool:
		if v.Bool() {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case Int:
		b.WriteString(IntText(v.Str()))
	case Float:
		b.WriteString(FloatRepr(v.Float()))
	case String:
		b.WriteString(StrRepr(v.Str()))
	case Array:
		b.WriteByte('[')
		v.Elems(func(i int, el Value) bool {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, el)
			return true
		})
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, m := range v.Members() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(StrRepr(m.Key))
			b.WriteString(": ")
			writeRepr(b, m.Val)
		}
		b.WriteByte('}')
	}
}

// FloatRepr is Python's repr(float): the shortest round-tripping digits,
// positional for exponents in [-4, 16), scientific otherwise.
func FloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	var out string
	if exp < -4 || exp >= 16 {
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		es := strconv.Itoa(exp)
		if len(es) < 2 {
			es = "0" + es
		}
		out += "e" + sign + es
	} else {
		out = positional(digits, exp)
	}
	if neg {
		return "-" + out
	}
	return out
}

func positional(digits string, exp int) string {
	if exp < 0 {
		return "0." + strings.Repeat("0", -exp-1) + digits
	}
	if len(digits) <= exp+1 {
		return digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	}
	return digits[:exp+1] + "." + digits[exp+1:]
}

// StrRepr is Python's repr(str): single quotes unless the text holds a
// single quote and no double quote; non-printable characters escaped.
func StrRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, n := decodeWTF8(s[i:])
		i += n
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			writeHexEscape(&b, `\x`, r, 2)
		case r < 0x7f:
			b.WriteByte(byte(r))
		case isPrintable(r):
			b.WriteRune(r)
		case r <= 0xff:
			writeHexEscape(&b, `\x`, r, 2)
		case r <= 0xffff:
			writeHexEscape(&b, `\u`, r, 4)
		default:
			writeHexEscape(&b, `\U`, r, 8)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// isPrintable follows Python's str.isprintable: everything except the
// categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs (the ASCII space aside).
func isPrintable(r rune) bool {
	if r >= 0xD800 && r <= 0xDFFF {
		return false
	}
	return unicode.IsPrint(r)
}

func writeHexEscape(b *strings.Builder, prefix string, r rune, width int) {
	b.WriteString(prefix)
	h := strconv.FormatInt(int64(r), 16)
	for i := len(h); i < width; i++ {
		b.WriteByte('0')
	}
	b.WriteString(h)
}

// decodeWTF8 decodes one code point, treating the three-byte encoding of
// a surrogate as that surrogate (see appendWTF8).
func decodeWTF8(s string) (rune, int) {
	if len(s) >= 3 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF && s[2] >= 0x80 && s[2] <= 0xBF {
		return 0xD000 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), 3
	}
	return utf8.DecodeRuneInString(s)
}
