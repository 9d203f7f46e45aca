package audit_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
)

// Outcomes and layer verdicts decode from their spellings only; the zero
// values are not valid, so a record read back never carries an outcome
// nobody decided.
func TestOutcomeAndVerdictJSON(t *testing.T) {
	for _, o := range []audit.Outcome{audit.OutcomeMayAct, audit.OutcomeRequireConfirmation, audit.OutcomeDeny, audit.OutcomeRefused, audit.OutcomeAnswered} {
		var back audit.Outcome
		if err := json.Unmarshal([]byte(`"`+o+`"`), &back); err != nil || back != o {
			t.Fatalf("outcome %s: %q, %v", o, back, err)
		}
	}
	for _, v := range []audit.Verdict{audit.VerdictMayAct, audit.VerdictRequireConfirmation, audit.VerdictDeny,
		audit.VerdictSkipped, audit.VerdictGrounded, audit.VerdictNotGrounded} {
		var back audit.Verdict
		if err := json.Unmarshal([]byte(`"`+v+`"`), &back); err != nil || back != v {
			t.Fatalf("verdict %s: %q, %v", v, back, err)
		}
	}
	for _, bad := range []string{`"accepted"`, `"may_act"`, `""`, `null`, `1`} {
		var o audit.Outcome
		if err := json.Unmarshal([]byte(bad), &o); err == nil {
			t.Errorf("outcome %s accepted", bad)
		}
		var v audit.Verdict
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("verdict %s accepted", bad)
		}
	}
	if audit.Outcome("").Valid() || audit.Verdict("").Valid() || audit.Verdict("REFUSED").Valid() {
		t.Error("a zero or foreign value is valid")
	}
	// A record whose outcome or layer verdict is misspelled is refused
	// when read, naming the field's rule.
	for _, body := range []string{
		`{"decision_id":"d","tool":"may_act","caller":{"transport":"stdio","role":"evaluate"},"outcome":"ACCEPTED"}`,
		`{"decision_id":"d","tool":"may_act","caller":{"transport":"stdio","role":"evaluate"},"outcome":"DENY","layers":[{"layer":"warrant","decision":"deny","reasons":[]}]}`,
	} {
		var d audit.Decision
		if err := json.Unmarshal([]byte(body), &d); err == nil || !strings.Contains(err.Error(), "is not one of") {
			t.Errorf("%s: decoded (%v)", body, err)
		}
	}
}
