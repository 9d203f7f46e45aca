package mcp

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// An action's arguments are recorded twice in its decision: by hash
// (arguments_hash, over the whole canonical arguments: what an approval
// binds) and as text for whoever answers it (arguments), so that an
// operator approving the deletion of protected/other.txt reads that path,
// not a hash. The text is bounded and redacted: the value of every member
// whose name contains one of the operator's redacted names (ewp-mcp
// --redact-arguments), at any depth, is replaced by RedactedMarker.

// DefaultRedactedArguments are the member names redacted when the
// operator names none: a member is redacted when its name, ignoring case,
// contains one of them (access_token, X-Api-Key, db_password, …).
var DefaultRedactedArguments = []string{
	"password", "passwd", "passphrase", "secret", "token", "api_key", "apikey", "api-key",
	"private_key", "authorization", "cookie", "credential", "session",
}

// RedactedMarker replaces a redacted member's value.
const RedactedMarker = "[redacted]"

// MaxRecordedArgumentsBytes bounds the recorded arguments' JSON text.
// Longer arguments are recorded as a JSON string holding the first
// MaxRecordedArgumentsBytes bytes of their (redacted) text, with
// arguments_truncated; the hash still covers them whole.
const MaxRecordedArgumentsBytes = 4096

// redactor redacts the members whose names contain one of names
// (lower case).
type redactor struct{ names []string }

func newRedactor(names []string) redactor {
	if names == nil {
		names = DefaultRedactedArguments
	}
	r := redactor{}
	for _, n := range names {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			r.names = append(r.names, n)
		}
	}
	return r
}

func (r redactor) redacts(key string) bool {
	k := strings.ToLower(key)
	for _, n := range r.names {
		if strings.Contains(k, n) {
			return true
		}
	}
	return false
}

// apply returns v with every redacted member's value replaced, at any
// depth; v itself is left as it was (it is also what was hashed).
func (r redactor) apply(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if r.redacts(k) {
				out[k] = RedactedMarker
			} else {
				out[k] = r.apply(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = r.apply(val)
		}
		return out
	}
	return v
}

// recorded is arguments as the decision records them: redacted, encoded
// as encoding/json writes them (the record's encoder copies them), and
// bounded; truncated says they were cut.
func (r redactor) recorded(arguments map[string]any) (text json.RawMessage, truncated bool) {
	b, err := json.Marshal(r.apply(arguments))
	if err != nil {
		return nil, false // decoded from JSON with UseNumber: unreachable
	}
	if len(b) <= MaxRecordedArgumentsBytes {
		return b, false
	}
	cut := MaxRecordedArgumentsBytes
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	s, _ := json.Marshal(string(b[:cut]))
	return s, true
}
