package jsonraw

import "testing"

func TestLoneSurrogate(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int
	}{
		{`"plain"`, -1},
		{`"\ud83d\ude00"`, -1},        // a pair
		{`"P-\ud800"`, 3},             // a high one alone
		{`"P-\udc00"`, 3},             // a low one alone
		{`"\ud800\u0041"`, 1},         // a high one, then not a low one
		{`"\\ud800"`, -1},             // an escaped backslash, then text
		{`"\\\ud800"`, 3},             // an escaped backslash, then an escape
		{`"\uD800"`, 1},               // upper-case hex
		{`"\u12"`, -1},                // too short to be one
		{`"\uzzzz \ud801"`, 8},        // not hex, then a lone one
		{`{"k\udfff":1}`, 3},          // in a key
		{`"\ud800\udc00\ud800"`, 13},  // a pair, then a lone one
		{`"\u00e9\ud83d\ude00x"`, -1}, // other escapes around a pair
		{`"ab\`, -1},                  // a trailing backslash
		{`"\ud800\u`, 1},              // a high one at the end
		{`"\ud800\udc0"`, 1},          // a low one cut short
		{`"x\ud7ff\ue000"`, -1},       // just outside the range
	} {
		if got := LoneSurrogate([]byte(tc.raw)); got != tc.want {
			t.Errorf("LoneSurrogate(%s) = %d, want %d", tc.raw, got, tc.want)
		}
	}
	if !BadText([]byte("\"\xff\"")) || BadText([]byte(`"é"`)) {
		t.Error("BadText does not tell invalid UTF-8 from valid")
	}
}
