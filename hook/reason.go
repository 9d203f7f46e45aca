package hook

import (
	"strings"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/console/consolelink"
	"github.com/ewp-go/ewp/internal/termtext"
)

// maxReasons bounds how many layer reasons an answer repeats (the record
// holds them all).
const maxReasons = 4

// Reason is the text a client shows for v: the decision, its decision_id
// and the restricting layers' reasons; for a call the operator must
// confirm, where and how. Reasons can quote what the agent sent (a path,
// a tool name), so they are escaped for a terminal (internal/termtext).
func Reason(v Verdict, w Where) string {
	var b strings.Builder
	b.WriteString("ewp: ")
	b.WriteString(string(v.Decision))
	if v.DecisionID != "" {
		b.WriteString(" (decision_id ")
		b.WriteString(termtext.Escape(v.DecisionID))
		b.WriteString(")")
	}
	for i, r := range v.Reasons {
		if i == maxReasons {
			b.WriteString("; …")
			break
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(termtext.Escape(r))
	}
	if v.Decision == audit.VerdictRequireConfirmation {
		b.WriteString(". ")
		b.WriteString(confirmHint(v, w))
	}
	return b.String()
}

// confirmHint says who confirms a pending call and how.
func confirmHint(v Verdict, w Where) string {
	if v.ConfirmBy == ConfirmUser {
		return "The manifest lets the user confirm this call."
	}
	if v.DecisionID == "" {
		return "It needs an operator's approval, and this gate keeps no decision log to approve it in."
	}
	id := termtext.Escape(v.DecisionID)
	s := "The operator approves it with `ewp-audit approve " + id + " --once"
	if w.DB != "" {
		s += " " + termtext.Escape(w.DB)
	}
	s += "`"
	if w.ConsoleURL != "" {
		s += " or at " + termtext.Escape(consolelink.Decision(w.ConsoleURL, v.DecisionID))
	}
	return s + "; then the same call by the same agent passes once: retry it."
}
