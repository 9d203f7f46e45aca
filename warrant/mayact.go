package warrant

// Decisions of the action gate, most permissive first.
const (
	MayActDecision      Verdict = "MAY_ACT"
	RequireConfirmation Verdict = "REQUIRE_CONFIRMATION"
	Deny                Verdict = "DENY"
)

// Risk levels of an action.
const (
	RiskLow    = "low"
	RiskMedium = "medium"
	RiskHigh   = "high"
)

// Action is what an agent wants to do.
type Action struct {
	ActionID   string `json:"action_id"`
	Kind       string `json:"kind"`
	Risk       string `json:"risk"`
	Reversible bool   `json:"reversible"`
}

// RiskPolicy is the action policy of §7.
type RiskPolicy struct {
	PolicyID                   string `json:"policy_id"`
	Version                    string `json:"version"`
	HighRequiresAccepted       bool   `json:"high_requires_accepted"`
	HighRequiresNoOpenConflict bool   `json:"high_requires_no_open_conflict"`
}

// DefaultRiskPolicy is action-v0.1.
func DefaultRiskPolicy() RiskPolicy {
	return RiskPolicy{PolicyID: "action-v0.1", Version: "0.1.0",
		HighRequiresAccepted: true, HighRequiresNoOpenConflict: true}
}

// ActDecision is the gate's answer with the reasons that produced it.
type ActDecision struct {
	Decision Verdict  `json:"decision"`
	Reasons  []string `json:"reasons"`
}

// ValidateAction refuses an action whose risk is not low|medium|high.
// (A non-boolean reversible is refused where the action is decoded.)
func ValidateAction(a Action) error {
	switch a.Risk {
	case RiskLow, RiskMedium, RiskHigh:
		return nil
	}
	return &Error{Code: CodeInvalidAction, Field: "action.risk",
		Rule: "must be one of low, medium, high; got " + quote(a.Risk)}
}

// MayAct is the EWP action gate of §7 over the axes w. It never re-derives
// the axes. Reasons name every rule that fired on the way to the decision.
func MayAct(w Axes, a Action, p RiskPolicy) (ActDecision, error) {
	if err := ValidateAction(a); err != nil {
		return ActDecision{}, err
	}
	if w.Acceptance == Unaccepted {
		return deny("acceptance=UNACCEPTED: nothing supports the proposition"), nil
	}
	if a.Risk == RiskHigh {
		return mayActHigh(w, a, p), nil
	}
	var reasons []string
	add := func(cond bool, why string) {
		if cond {
			reasons = append(reasons, why)
		}
	}
	add(w.Currency == Superseded, "currency=SUPERSEDED: the proposition has been superseded")
	add(w.Conflict == ConflictOpen, "conflict=OPEN: the evidence disagrees")
	add(w.Sufficiency == Degraded, "sufficiency=DEGRADED: the view is incomplete")
	add(w.Currency == Stale && a.Risk != RiskLow, "currency=STALE at risk "+a.Risk)
	add(w.Acceptance == Tentative && a.Risk != RiskLow, "acceptance=TENTATIVE at risk "+a.Risk)
	add(!a.Reversible && w.Acceptance != Accepted && a.Risk != RiskLow,
		"irreversible action on an unaccepted proposition")
	if len(reasons) > 0 {
		return ActDecision{Decision: RequireConfirmation, Reasons: reasons}, nil
	}
	return ActDecision{Decision: MayActDecision, Reasons: []string{"warrant suffices for risk " + a.Risk}}, nil
}

func mayActHigh(w Axes, a Action, p RiskPolicy) ActDecision {
	switch {
	case w.Currency == Superseded:
		return deny("risk=high and currency=SUPERSEDED")
	case p.HighRequiresAccepted && w.Acceptance != Accepted:
		return deny("risk=high requires acceptance=ACCEPTED; got " + w.Acceptance)
	case p.HighRequiresNoOpenConflict && w.Conflict == ConflictOpen:
		return deny("risk=high requires no open conflict")
	case !a.Reversible && w.Acceptance != Accepted:
		return deny("risk=high, irreversible, and not ACCEPTED")
	}
	var reasons []string
	if w.Sufficiency == Degraded {
		reasons = append(reasons, "risk=high and sufficiency=DEGRADED")
	}
	if w.Currency == Stale {
		reasons = append(reasons, "risk=high and currency=STALE")
	}
	if len(reasons) > 0 {
		return ActDecision{Decision: RequireConfirmation, Reasons: reasons}
	}
	return ActDecision{Decision: MayActDecision, Reasons: []string{"warrant suffices for risk high"}}
}

func deny(why string) ActDecision {
	return ActDecision{Decision: Deny, Reasons: []string{why}}
}

func quote(s string) string { return "\"" + s + "\"" }
