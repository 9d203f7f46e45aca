package pyjson

import "strconv"

// Writer builds JSON text exactly as Python's json.dumps(obj,
// sort_keys=True) prints it with the default separators (", " and ": ")
// and ensure_ascii. Callers emit object keys in sorted order themselves;
// the Writer only formats.
type Writer struct {
	Buf []byte
}

// String appends s as a JSON string with every non-ASCII character
// escaped as \uXXXX (surrogate pairs above the BMP).
func (w *Writer) String(s string) {
	w.Buf = AppendString(w.Buf, s)
}

// Raw appends literal JSON text.
func (w *Writer) Raw(s string) { w.Buf = append(w.Buf, s...) }

// Key appends `"key": `, preceded by ", " unless first.
func (w *Writer) Key(key string, first bool) {
	if !first {
		w.Buf = append(w.Buf, ", "...)
	}
	w.String(key)
	w.Buf = append(w.Buf, ": "...)
}

// StringList appends a JSON array of strings.
func (w *Writer) StringList(list []string) {
	w.Buf = append(w.Buf, '[')
	for i, s := range list {
		if i > 0 {
			w.Buf = append(w.Buf, ", "...)
		}
		w.String(s)
	}
	w.Buf = append(w.Buf, ']')
}

// Bool appends true or false.
func (w *Writer) Bool(b bool) { w.Buf = strconv.AppendBool(w.Buf, b) }

const hexDigits = "0123456789abcdef"

// AppendString appends the ensure_ascii JSON encoding of s. Runs of plain
// ASCII are copied whole; only the bytes that need escaping are handled one
// at a time.
func AppendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x80 && c != '"' && c != '\\' {
			i++
			continue
		}
		buf = append(buf, s[start:i]...)
		if c < 0x80 {
			buf = appendASCIIEscape(buf, c)
			i++
		} else {
			r, n := decodeWTF8(s[i:])
			i += n
			buf = appendRuneEscape(buf, r)
		}
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// appendRuneEscape writes a non-ASCII code point as \uXXXX, with a
// surrogate pair above the BMP, as ensure_ascii does.
func appendRuneEscape(buf []byte, r rune) []byte {
	if r >= 0x10000 {
		r -= 0x10000
		buf = appendU(buf, 0xD800+(r>>10))
		return appendU(buf, 0xDC00+(r&0x3FF))
	}
	return appendU(buf, r)
}

func appendASCIIEscape(buf []byte, c byte) []byte {
	switch c {
	case '"':
		return append(buf, `\"`...)
	case '\\':
		return append(buf, `\\`...)
	case '\n':
		return append(buf, `\n`...)
	case '\r':
		return append(buf, `\r`...)
	case '\t':
		return append(buf, `\t`...)
	case '\b':
		return append(buf, `\b`...)
	case '\f':
		return append(buf, `\f`...)
	}
	return appendU(buf, rune(c))
}

func appendU(buf []byte, r rune) []byte {
	return append(buf, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}
