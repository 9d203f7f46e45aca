package warrant

import (
	"encoding/json"
	"testing"
)

// A verdict decodes from exactly its three spellings; every other one,
// the empty string and non-strings included, is refused, and the zero
// value is no verdict.
func TestVerdictJSON(t *testing.T) {
	for _, v := range []Verdict{MayActDecision, RequireConfirmation, Deny} {
		b, err := json.Marshal(v)
		if err != nil || string(b) != `"`+string(v)+`"` {
			t.Fatalf("Marshal(%s) = %s, %v", v, b, err)
		}
		var back Verdict
		if err := json.Unmarshal(b, &back); err != nil || back != v {
			t.Fatalf("Unmarshal(%s) = %q, %v", b, back, err)
		}
	}
	for _, bad := range []string{`"DENY "`, `"deny"`, `"permit"`, `"SKIPPED"`, `""`, `true`, `null`, `0`} {
		var v Verdict
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("Unmarshal(%s) accepted %q", bad, v)
		}
	}
	var zero Verdict
	if zero.Valid() {
		t.Error("the zero Verdict is valid")
	}
	if _, err := json.Marshal(zero); err == nil {
		t.Error("the zero Verdict marshals")
	}
}
