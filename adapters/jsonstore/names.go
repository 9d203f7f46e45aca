package jsonstore

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// File names for ids. An id may be any string (any Unicode, "/", "..",
// control characters, invalid UTF-8 from escaped surrogates, kilobytes
// long) and must map to a name that is safe on every common file system,
// and two different ids must never map to names a file system confuses.
//
// escape keeps the bytes [a-z0-9_-] and writes every other byte as %XX
// (upper-case hex). Upper-case letters are escaped too, so that "P-x" and
// "p-x" stay apart on case-insensitive file systems (macOS, Windows): the
// only upper-case characters in a name are the hex digits of escapes, and
// a "%" fixes where each escape starts, so two names that differ in case
// only would have to differ in an escape's digits, which are always upper
// case. "." is escaped as well, so no name is "." or "..", none starts
// with "." (names that start with "." belong to the store) and none
// contains ".json".
//
// A name longer than maxName is cut to a readable prefix plus "~" and 128
// bits of the id's sha256. "~" is always escaped, so a hashed name can
// never equal an escaped one. The real id is kept inside the files; the
// name only has to be unique.
const (
	maxName    = 120
	prefixName = 80
)

func escape(id string) string {
	var b strings.Builder
	b.Grow(len(id))
	const hexDigits = "0123456789ABCDEF"
	for i := 0; i < len(id); i++ {
		c := id[i]
		if ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c == '-' || c == '_' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	name := b.String()
	if len(name) <= maxName {
		return name
	}
	cut := prefixName
	// Do not split an escape: back up to the '%' that starts it.
	if i := strings.LastIndexByte(name[cut-2:cut], '%'); i >= 0 {
		cut = cut - 2 + i
	}
	sum := sha256.Sum256([]byte(id))
	return name[:cut] + "~" + hex.EncodeToString(sum[:16])
}
