package snapshot

import (
	"strconv"

	"github.com/ewp-go/ewp/warrant"
)

// CheckSurrogates refuses a view holding a lone UTF-16 surrogate in any
// string (ids, texts, times, subjects, source fields, lineage endpoints,
// and \uD800-style escapes in adapter_meta) with warrant.CodeLoneSurrogate
// naming the field. The kernel keeps such strings as WTF-8, as the
// reference does, but the JSON libraries between an agent and the server
// rewrite them to U+FFFD: a stored "P-\ud800" would be asked about as
// "P-\ufffd", and the server would answer for another proposition or for
// none. So every store refuses them at the write, where the writer can
// still fix the input.
func CheckSurrogates(v *warrant.View) error {
	var field string
	if f, ok := v.FirstString(hasLoneSurrogate); ok {
		field = f.Path()
	} else if loneEscape(v.AdapterMeta) {
		field = "adapter_meta"
	} else {
		return nil
	}
	return &warrant.Error{Code: warrant.CodeLoneSurrogate, Field: field,
		Rule: "the value holds a lone UTF-16 surrogate (an unpaired \\uD800-\\uDFFF escape); JSON clients rewrite it to U+FFFD, so it could never be asked for again as stored; replace it with the intended character or drop it"}
}

// hasLoneSurrogate finds the WTF-8 form of a surrogate code point (ED A0-BF
// xx), which is how the kernel carries one; valid UTF-8 never has it, since
// a pair decodes to one four-byte character.
func hasLoneSurrogate(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF {
			return true
		}
	}
	return false
}

// loneEscape finds an unpaired \uD800-\uDFFF escape in JSON text (the
// kernel re-serialises adapter_meta with every non-ASCII character
// escaped, so a surrogate there is an escape, not bytes).
func loneEscape(js string) bool {
	pendingHigh := false
	for i := 0; i < len(js); i++ {
		if js[i] != '\\' || i+1 >= len(js) {
			if pendingHigh {
				return true
			}
			continue
		}
		if js[i+1] != 'u' || i+6 > len(js) {
			if pendingHigh {
				return true
			}
			i++ // an escaped character, possibly a backslash: skip it
			continue
		}
		u, err := strconv.ParseUint(js[i+2:i+6], 16, 32)
		i += 5
		switch {
		case err != nil:
			pendingHigh = false
		case u >= 0xD800 && u <= 0xDBFF:
			if pendingHigh {
				return true
			}
			pendingHigh = true
		case u >= 0xDC00 && u <= 0xDFFF:
			if !pendingHigh {
				return true
			}
			pendingHigh = false
		default:
			if pendingHigh {
				return true
			}
		}
	}
	return pendingHigh
}
