// Package jsonraw holds checks made on JSON text before it is decoded,
// where decoding would hide what was sent. Go's encoding/json (and with
// it mcp-go) decodes a lone UTF-16 surrogate escape such as \ud800, and
// invalid UTF-8, to U+FFFD without a word, so an id "P-\ud800" would name
// the stored "P-\ufffd". The project refuses such text instead of
// rewriting it, and every entrance that reads an agent's JSON asks here.
package jsonraw

import (
	"bytes"
	"unicode/utf8"
)

// BadText reports whether raw JSON holds a lone surrogate escape or
// invalid UTF-8 anywhere: the text a decoder would silently rewrite.
func BadText(raw []byte) bool {
	return LoneSurrogate(raw) >= 0 || !utf8.Valid(raw)
}

// LoneSurrogate returns the offset of the first \uD800–\uDFFF escape in
// raw that is not a high surrogate followed by a low one, or -1. An
// escaped backslash is skipped whole, so "\\ud800" (a backslash, then
// text) is not taken for an escape.
func LoneSurrogate(raw []byte) int {
	for i := 0; i < len(raw); i++ {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return -1
		}
		i += j
		if i+5 >= len(raw) || raw[i+1] != 'u' {
			i++ // an escaped character, never the start of another escape
			continue
		}
		r := hex4(raw[i+2 : i+6])
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if i+11 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				if lo := hex4(raw[i+8 : i+12]); lo >= 0xDC00 && lo <= 0xDFFF {
					i += 11
					continue
				}
			}
			return i
		case r >= 0xDC00 && r <= 0xDFFF:
			return i
		}
		i += 5
	}
	return -1
}

// hex4 is the value of four hex digits, or -1.
func hex4(b []byte) rune {
	var n rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			n = n<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			n = n<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			n = n<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return n
}
