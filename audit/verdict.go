package audit

import (
	"encoding/json"
	"fmt"
)

// Outcome is what became of a recorded call: one of the Outcome
// constants. Its zero value is no outcome (Valid is false): the stores
// refuse to record it, and JSON decoding refuses every spelling but the
// five. It is a string type so that the records, the chain's payload and
// the stores' columns carry the protocol's spelling unchanged.
type Outcome string

// Valid reports whether o is one of the five outcomes.
func (o Outcome) Valid() bool {
	switch o {
	case OutcomeMayAct, OutcomeRequireConfirmation, OutcomeDeny, OutcomeRefused, OutcomeAnswered:
		return true
	}
	return false
}

const outcomeSpellings = "MAY_ACT, REQUIRE_CONFIRMATION, DENY, REFUSED or ANSWERED"

// UnmarshalJSON accepts exactly one of the five outcomes.
func (o *Outcome) UnmarshalJSON(b []byte) error {
	s, err := spelling(b, "an outcome", outcomeSpellings)
	if err == nil && !Outcome(s).Valid() {
		err = fmt.Errorf("audit: outcome %q is not one of %s", s, outcomeSpellings)
	}
	if err != nil {
		return err
	}
	*o = Outcome(s)
	return nil
}

// Verdict is one gate layer's decision as recorded (Layer.Decision): the
// action gate's MAY_ACT, REQUIRE_CONFIRMATION and DENY, SKIPPED for a
// warrant layer that had no proposition to judge, and check_grounding's
// GROUNDED and NOT_GROUNDED. Its zero value is no verdict (Valid is
// false) and JSON decoding refuses every other spelling.
type Verdict string

// Layer verdicts.
const (
	VerdictMayAct              Verdict = "MAY_ACT"
	VerdictRequireConfirmation Verdict = "REQUIRE_CONFIRMATION"
	VerdictDeny                Verdict = "DENY"
	VerdictSkipped             Verdict = "SKIPPED"
	VerdictGrounded            Verdict = "GROUNDED"
	VerdictNotGrounded         Verdict = "NOT_GROUNDED"
)

// Valid reports whether v is one of the layer verdicts.
func (v Verdict) Valid() bool {
	switch v {
	case VerdictMayAct, VerdictRequireConfirmation, VerdictDeny, VerdictSkipped, VerdictGrounded, VerdictNotGrounded:
		return true
	}
	return false
}

const verdictSpellings = "MAY_ACT, REQUIRE_CONFIRMATION, DENY, SKIPPED, GROUNDED or NOT_GROUNDED"

// UnmarshalJSON accepts exactly one of the layer verdicts.
func (v *Verdict) UnmarshalJSON(b []byte) error {
	s, err := spelling(b, "a layer verdict", verdictSpellings)
	if err == nil && !Verdict(s).Valid() {
		err = fmt.Errorf("audit: layer verdict %q is not one of %s", s, verdictSpellings)
	}
	if err != nil {
		return err
	}
	*v = Verdict(s)
	return nil
}

// spelling decodes a JSON string for a verdict type's decoder.
func spelling(b []byte, what, want string) (string, error) {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return "", fmt.Errorf("audit: %s is a JSON string (%s), not %s", what, want, b)
	}
	return s, nil
}
