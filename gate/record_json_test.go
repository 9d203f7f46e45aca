package gate

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// TestAxesJSONMatchesMarshal holds the record's encoding of the axes
// byte-equal to json.Marshal's, over random axes with every kind of
// string and strength, and the risk policy's cached encoding likewise.
func TestAxesJSONMatchesMarshal(t *testing.T) {
	words := []string{"", "ACCEPTED", "acceptance.accepted", `q"uote`, "<b>", "é", "\xff", "tab\t"}
	floats := []float64{0, 1, 0.9, 0.1 + 0.2, 1e-7, 5e-6, 1e21, 123456789, -0.5, math.NaN(), math.Inf(1)}
	r := rand.New(rand.NewPCG(5, 6))
	w := func() string { return words[r.IntN(len(words))] }
	for i := range 5000 {
		a := warrant.Axes{Acceptance: w(), Conflict: w(), Verification: w(), Currency: w(), Sufficiency: w(),
			Strength: floats[r.IntN(len(floats))]}
		switch r.IntN(3) {
		case 1:
			a.RationaleCodes = []string{}
		case 2:
			a.RationaleCodes = []string{w(), w()}
		}
		want, werr := json.Marshal(a)
		got, gerr := json.Marshal(AxesJSON(a))
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("axes %d %+v:\njson: %s (%v)\nours: %s (%v)", i, a, want, werr, got, gerr)
		}
		if c, ok := AxesJSON(a).(audit.CompactJSON); ok && !bytes.Equal(c, want) {
			t.Fatalf("axes %d: the CompactJSON itself differs: %s", i, c)
		}
	}
	var c riskPolicies
	for _, p := range []warrant.RiskPolicy{warrant.DefaultRiskPolicy(), {PolicyID: "x<y", Version: "2"}, warrant.DefaultRiskPolicy()} {
		want, _ := json.Marshal(p)
		if got, _ := json.Marshal(c.encoded(p)); !bytes.Equal(got, want) {
			t.Fatalf("risk policy %+v: %s, want %s", p, got, want)
		}
	}
}
