package warrant

import (
	"encoding/json"
	"fmt"
)

// Verdict is the action gate's decision: MayActDecision,
// RequireConfirmation or Deny. Its zero value is no verdict (Valid is
// false), so a decision nobody set never reads as one, and JSON decoding
// refuses every other spelling, as cedar-go's Decision does.
//
// It is a string type rather than an integer one so that its JSON, and
// every record and answer that carries it, is the protocol's spelling with
// no translation table in between.
type Verdict string

// Valid reports whether v is one of the three verdicts.
func (v Verdict) Valid() bool {
	switch v {
	case MayActDecision, RequireConfirmation, Deny:
		return true
	}
	return false
}

// MarshalJSON writes the verdict's spelling and refuses an invalid one, so
// an answer never carries a verdict the protocol does not know.
func (v Verdict) MarshalJSON() ([]byte, error) {
	if !v.Valid() {
		return nil, fmt.Errorf("warrant: %q is not a verdict (MAY_ACT, REQUIRE_CONFIRMATION or DENY)", string(v))
	}
	return []byte(`"` + string(v) + `"`), nil
}

// UnmarshalJSON accepts exactly MAY_ACT, REQUIRE_CONFIRMATION or DENY.
func (v *Verdict) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("warrant: a verdict is a JSON string (MAY_ACT, REQUIRE_CONFIRMATION or DENY), not %s", b)
	}
	if !Verdict(s).Valid() {
		return fmt.Errorf("warrant: %q is not a verdict (MAY_ACT, REQUIRE_CONFIRMATION or DENY)", s)
	}
	*v = Verdict(s)
	return nil
}
