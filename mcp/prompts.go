package mcp

import (
	"context"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// packetRules are the rules an agent follows when it uses remembered
// evidence (EWP.md §11). They ship three ways, because clients surface
// different things: as the packet_rules prompt, in the server
// instructions, and (short form) in every read tool's description.
var packetRules = []string{
	"Memory is evidence, not truth: what the ledger holds was recorded, which does not make it so.",
	"If conflict=OPEN, say so.",
	"If sufficiency=DEGRADED, say the view is incomplete.",
	"Fluency is not recollection: when acceptance is not ACCEPTED, keep that visible in what you say.",
	"verification=EXTERNAL (or HUMAN) with an opposing check means \"checked and contradicted\".",
	"Before acting on a proposition, ask may_act; it decides on the latest stored evidence at the server's clock.",
}

const rulesShort = "Rules: memory is evidence, not truth; say conflict=OPEN; say DEGRADED means incomplete; " +
	"keep acceptance≠ACCEPTED visible; EXTERNAL plus an opposing check means checked and contradicted."

const packetPrompt = "packet_rules"

func instructions() string {
	return "ewp-mcp serves the Epistemic Warrant Protocol (EWP-0.2.0, policy reference-v2): it tells you how far " +
		"remembered evidence warrants a proposition, and whether an action may rely on it.\n" + bullets()
}

func bullets() string {
	var b strings.Builder
	for _, r := range packetRules {
		b.WriteString("- " + r + "\n")
	}
	return b.String()
}

func (s *Server) registerPrompts() {
	p := mcpgo.NewPrompt(packetPrompt,
		mcpgo.WithPromptDescription("The rules for using remembered evidence: what to say about conflict, "+
			"incompleteness and unaccepted claims, and when to ask may_act."),
		mcpgo.WithArgument("proposition_id",
			mcpgo.ArgumentDescription("Optional: a proposition you are about to use; the prompt asks you to "+
				"fetch its memory_context first.")),
	)
	s.mcp.AddPrompt(p, s.packetRulesPrompt)
}

func (s *Server) packetRulesPrompt(_ context.Context, req mcpgo.GetPromptRequest) (*mcpgo.GetPromptResult, error) {
	text := "Follow these rules whenever you use remembered evidence:\n" + bullets()
	if pid := req.Params.Arguments["proposition_id"]; pid != "" {
		text += fmt.Sprintf("\nBefore you rely on proposition %q, call memory_context with "+
			"proposition_id %q and voice every warning it returns.\n", pid, pid)
	}
	return mcpgo.NewGetPromptResult("EWP packet rules",
		[]mcpgo.PromptMessage{mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewTextContent(text))}), nil
}
