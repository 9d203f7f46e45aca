package mcp

import (
	"encoding/json"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// toolResult is one tool call's answer as it goes on the wire: body is the
// JSON of the structured result, or of the refusal ({error, message}) when
// isError. It is encoded once; the text content is that same JSON as a
// string, so the two can never disagree.
type toolResult struct {
	body    []byte
	isError bool
}

// mcpResult is r as mcp-go's CallToolResult, for the transports mcp-go
// serves (stdio, in-process, HTTP requests the direct path leaves alone).
// RawStructuredContent makes mcp-go copy body instead of encoding a value
// again.
func (r toolResult) mcpResult() *mcpgo.CallToolResult {
	res := &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.NewTextContent(string(r.body))}, IsError: r.isError}
	if !r.isError {
		res.RawStructuredContent = r.body
	}
	return res
}

// appendResponse appends the JSON-RPC response carrying r to dst, byte for
// byte as mcp-go encodes it (CallToolResult's keys in map order: content,
// isError, structuredContent), with json.Encoder's trailing newline. id
// must already be in the form mcp-go echoes (see echoID).
func appendResponse(dst, id []byte, r toolResult) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":{"content":[{"type":"text","text":`...)
	dst = appendJSONString(dst, r.body)
	dst = append(dst, "}]"...)
	if r.isError {
		dst = append(dst, `,"isError":true`...)
	} else {
		dst = append(dst, `,"structuredContent":`...)
		dst = append(dst, r.body...)
	}
	return append(dst, "}}\n"...)
}

// echoID returns a valid request id (see validID) as mcp-go writes it
// back: mcp-go decodes ids into Go values and encodes them again, so an
// integer literal comes back as written (it is exact in a float64 within
// ±2^53) and a string in encoding/json's escaping.
func echoID(raw json.RawMessage) []byte {
	if !isString(raw) {
		return raw
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return raw // unreachable: the message was valid JSON
	}
	return appendJSONString(nil, []byte(s))
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json
// encodes a Go string with HTML escaping (its default): <, > and & as
// \u00XX, U+2028 and U+2029 escaped, invalid UTF-8 as \ufffd.
// TestAppendJSONStringMatchesEncodingJSON holds it to that.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if plainByte[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendEscapedByte(dst, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\u202`...)
			dst = append(dst, hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainByte marks the ASCII bytes a JSON string carries as they are.
var plainByte = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

func appendEscapedByte(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
