package notify

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/internal/termtext"
)

// Format is the shape of a notice's body.
type Format string

// The formats: FormatGeneric is the notice as JSON fields (below);
// FormatSlack and FormatTeams are {"text": …}, which a Slack incoming
// webhook and a Teams incoming webhook both post as a message, with what
// the agent wrote escaped for that app's markup.
const (
	FormatGeneric Format = "generic"
	FormatSlack   Format = "slack"
	FormatTeams   Format = "teams"
)

// ParseFormat accepts the three formats ("" is generic).
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case "":
		return FormatGeneric, nil
	case FormatGeneric, FormatSlack, FormatTeams:
		return f, nil
	}
	return "", fmt.Errorf("notify format %q: want generic, slack or teams", s)
}

// EventPending is the generic notice's event.
const EventPending = "decision.pending"

// Notice is the generic body: what the operator needs to find the
// decision and judge whether it is urgent. The action's arguments are
// not sent (they stay in the log, redacted, for whoever answers).
type Notice struct {
	Event         string    `json:"event"`
	DecisionID    string    `json:"decision_id"`
	Time          time.Time `json:"time"`
	Tool          string    `json:"tool"`
	PropositionID string    `json:"proposition_id,omitempty"`
	ActionID      string    `json:"action_id,omitempty"`
	ActionKind    string    `json:"action_kind,omitempty"`
	ToolName      string    `json:"tool_name,omitempty"`
	Risk          string    `json:"risk,omitempty"`
	Concepts      []string  `json:"concepts,omitempty"`
	// Reasons are the reasons of the layers that asked for confirmation.
	Reasons []string `json:"reasons,omitempty"`
	// Approve is the ewp-audit command that answers it (add --key).
	Approve string `json:"approve"`
}

// NoticeOf is d's generic notice.
func NoticeOf(d *audit.Decision) Notice {
	n := Notice{Event: EventPending, DecisionID: d.ID, Time: d.Time.UTC(), Tool: d.Tool,
		PropositionID: d.PropositionID, ActionID: d.ActionID, ActionKind: d.ActionKind, ToolName: d.ToolName,
		Risk: d.Risk, Concepts: d.Concepts, Approve: "ewp-audit approve " + d.ID}
	for _, l := range d.Layers {
		if l.Decision == audit.VerdictRequireConfirmation {
			n.Reasons = append(n.Reasons, l.Reasons...)
		}
	}
	return n
}

// Payload is d's notice in format f.
func Payload(f Format, d *audit.Decision) ([]byte, error) {
	n := NoticeOf(d)
	switch f {
	case FormatSlack:
		return json.Marshal(struct {
			Text string `json:"text"`
		}{messageText(n, slackText)})
	case FormatTeams:
		return json.Marshal(struct {
			Text string `json:"text"`
		}{messageText(n, teamsText)})
	}
	return json.Marshal(n)
}

// maxValueRunes bounds each agent-written value in a message.
const maxValueRunes = 200

// messageText is the chat message: a line an operator reads at a glance,
// every value passed through quote for the app's markup.
func messageText(n Notice, quote func(string) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "EWP: decision %s awaits confirmation", quote(n.DecisionID))
	if n.ActionKind != "" || n.ToolName != "" {
		fmt.Fprintf(&b, ": %s", quote(strings.TrimSpace(n.ActionKind+" "+n.ToolName)))
	}
	if n.PropositionID != "" {
		fmt.Fprintf(&b, " on %s", quote(n.PropositionID))
	}
	if n.Risk != "" {
		fmt.Fprintf(&b, " (risk %s)", quote(n.Risk))
	}
	if len(n.Reasons) > 0 {
		fmt.Fprintf(&b, ". Why: %s", quote(strings.Join(n.Reasons, ", ")))
	}
	fmt.Fprintf(&b, ". Answer it: %s --key YOUR.key (or in the console's inbox).", quote(n.Approve))
	return b.String()
}

// plain makes an agent's value one visible line of bounded length:
// controls and invisible characters shown escaped (termtext), so a
// newline cannot forge a second message line.
func plain(s string) string {
	s = termtext.Escape(s)
	if utf8.RuneCountInString(s) > maxValueRunes {
		r := []rune(s)
		s = string(r[:maxValueRunes]) + "…"
	}
	return s
}

// slackText quotes s for Slack's mrkdwn: &, < and > escaped as Slack
// asks (so no <!channel>, <@user> or <url|link> can be spelled), inside
// a code span (so *, _ and ~ format nothing), whose backticks cannot be
// closed early because s's own are replaced.
func slackText(s string) string {
	s = strings.ReplaceAll(plain(s), "`", "'")
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	return "`" + s + "`"
}

// teamsMarkup is what Teams' message markdown (and its HTML subset)
// would act on.
var teamsMarkup = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"(", `\(`, ")", `\)`, "#", `\#`, "|", `\|`, "~", `\~`, "!", `\!`,
)

// teamsText quotes s for a Teams message: HTML and markdown characters
// escaped, so what the agent wrote shows as it was written.
func teamsText(s string) string { return teamsMarkup.Replace(plain(s)) }
