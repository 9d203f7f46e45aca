package audit

import (
	"encoding/json"
	"testing"
)

// AsJSON is what encoding/json reads back: one U+FFFD per invalid byte.
func TestAsJSONMatchesRoundTrip(t *testing.T) {
	for _, s := range []string{"plain", "é", "a\xffb", "\xed\xa0\x80", "x\xff\xfey"} {
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back string
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if got := AsJSON(s); got != back {
			t.Errorf("AsJSON(%q) = %q, want %q", s, got, back)
		}
	}
}
