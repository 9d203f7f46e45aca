package mcp

import (
	"bytes"
	"strconv"

	"github.com/ewp-go/ewp/internal/jsonraw"
	"github.com/ewp-go/ewp/warrant"
)

// Lone surrogates. JSON may spell a UTF-16 surrogate as an escape
// (\ud800) without its pair; Go's encoding/json, and with it mcp-go,
// silently decodes such a string with U+FFFD in its place, so "P-\ud800"
// would select the stored proposition "P-\ufffd", a different one. The
// project's rule is to refuse, never rewrite, and after decoding it is too
// late to tell, so the raw bytes are scanned. Invalid UTF-8 bytes are
// rewritten the same way and are refused alike.

// badText reports whether raw, valid JSON, holds a lone surrogate escape
// or invalid UTF-8 anywhere (jsonraw.BadText).
func badText(raw []byte) bool { return jsonraw.BadText(raw) }

// textRefusal finds the first string (a key or a value) of raw, valid
// JSON, that badText objects to and returns its refusal naming it by its
// path under field; nil when there is none.
func textRefusal(field string, raw []byte) *warrant.Error {
	if !badText(raw) {
		return nil
	}
	path, lone := badString(field, raw)
	if lone {
		return refuse(warrant.CodeLoneSurrogate, path, "holds a lone UTF-16 surrogate escape (\\ud800-\\udfff without "+
			"its pair); a JSON decoder would silently read it as U+FFFD, a different text, so it is refused: send valid Unicode")
	}
	return badArg(path, "is not valid UTF-8; a JSON decoder would silently replace the bytes with U+FFFD, so it is refused")
}

// badString walks raw to the first offending string and returns its path
// and whether the offence is a lone surrogate (else invalid UTF-8).
func badString(path string, raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return path, false
	}
	switch raw[0] {
	case '"':
		return path, jsonraw.LoneSurrogate(raw) >= 0
	case '{':
		return badMember(path, raw)
	case '[':
		return badElement(path, raw)
	}
	return path, false
}

func badMember(path string, raw []byte) (string, bool) {
	for i := skipSpace(raw, 1); i < len(raw) && raw[i] == '"'; {
		kend := skipString(raw, i)
		key := raw[i:kend]
		start := skipSpace(raw, skipSpace(raw, kend)+1) // past the colon
		end := skipValue(raw, start)
		if badText(key) {
			return join(path, string(key)), jsonraw.LoneSurrogate(key) >= 0
		}
		if badText(raw[start:end]) {
			name, _ := decodeKey(key)
			return badString(join(path, name), raw[start:end])
		}
		i = skipSpace(raw, skipSpace(raw, end)+1) // past the comma
	}
	return path, false
}

func badElement(path string, raw []byte) (string, bool) {
	i := skipSpace(raw, 1)
	for n := 0; i < len(raw) && raw[i] != ']'; n++ {
		end := skipValue(raw, i)
		if badText(raw[i:end]) {
			return badString(path+"["+strconv.Itoa(n)+"]", raw[i:end])
		}
		i = skipSpace(raw, skipSpace(raw, end)+1)
	}
	return path, false
}
