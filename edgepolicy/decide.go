package edgepolicy

// Decisions of the edge-policy layer, named as in the composed action gate.
const (
	MayAct              = "MAY_ACT"
	RequireConfirmation = "REQUIRE_CONFIRMATION"
	Deny                = "DENY"
)

// Decide turns violations into the layer's decision. Any hard violation
// denies, and only the hard messages are given as reasons: asking a human to
// confirm something that is blocked anyway would be misleading. The caller
// still reports every violation.
func Decide(violations []Violation) (decision string, reasons []string) {
	var hard, pending []string
	for _, v := range violations {
		if v.RequiresConfirmation {
			pending = append(pending, v.Message)
		} else {
			hard = append(hard, v.Message)
		}
	}
	switch {
	case len(hard) > 0:
		return Deny, hard
	case len(pending) > 0:
		return RequireConfirmation, pending
	}
	return MayAct, nil
}
