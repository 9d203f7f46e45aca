package edgepolicy

import (
	"slices"
	"testing"
)

func TestDecide(t *testing.T) {
	hard1 := Violation{PolicyID: "h1", Message: "blocked 1"}
	hard2 := Violation{PolicyID: "h2", Message: "blocked 2"}
	conf1 := Violation{PolicyID: "c1", RequiresConfirmation: true, Message: "confirm 1"}
	conf2 := Violation{PolicyID: "c2", RequiresConfirmation: true, Message: "confirm 2"}
	cases := []struct {
		name     string
		in       []Violation
		decision string
		reasons  []string
	}{
		{"none", nil, MayAct, nil},
		{"confirmations only", []Violation{conf1, conf2}, RequireConfirmation, []string{"confirm 1", "confirm 2"}},
		{"hard wins over confirmation", []Violation{conf1, hard1, conf2, hard2}, Deny, []string{"blocked 1", "blocked 2"}},
		{"single hard", []Violation{hard2}, Deny, []string{"blocked 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, r := Decide(c.in)
			if d != c.decision || !slices.Equal(r, c.reasons) {
				t.Fatalf("Decide = %q %q, want %q %q", d, r, c.decision, c.reasons)
			}
		})
	}
}
