package mcp

import (
	"encoding/json"
	"testing"
)

// appendJSONString must write what encoding/json writes for the same Go
// string, because the direct HTTP path and mcp-go's transports must send
// the same bytes.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{
		"", "plain", `"quoted"`, `back\slash`, "<html> & co", "\u2028\u2029", "é日本😀",
		"\x00\x01\b\f\n\r\t\x1f\x7f", "\xff", "\xe6\x97", "\xed\xa0\x80", "a\xc0\xafb", "\U0010ffff",
		`{"a":"\u003c","b":[1,2]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		want, err := json.Marshal(string(s))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got[1:], want)
		}
	})
}

// echoID writes an id back as mcp-go does: decoded and encoded again.
func TestEchoIDMatchesMCPGo(t *testing.T) {
	for _, raw := range []string{`1`, `-0`, `0`, `9007199254740991`, `-9007199254740991`, `"s"`,
		`"\u0041"`, `"<&>"`, `"\/"`, `"\ud800"`, `"é\u2028"`} {
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(v)
		if got := echoID(json.RawMessage(raw)); string(got) != string(want) {
			t.Errorf("echoID(%s) = %s, want %s", raw, got, want)
		}
	}
}
