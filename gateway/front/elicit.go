package front

import (
	"context"
	"time"

	"github.com/ewp-go/ewp/console/consolelink"
	"github.com/mark3labs/mcp-go/server"
)

// elicitWait bounds how long an elicitation sent for a pending decision
// is waited on: the answer changes nothing (the operator decides in the
// log, not the user in the client), so it is only logged.
const elicitWait = 10 * time.Minute

// elicit sends, when the client declared URL-mode elicitation and there
// is a console to point at, an elicitation that opens the decision's
// console page. It never delays the tool error the agent gets: it is sent
// on its own goroutine, on a context the call's end does not cancel.
// Over the stateless HTTP transport there is no session to send it on.
func (f *Front) elicit(ctx context.Context, decisionID string) {
	u := consolelink.Decision(f.cfg.Approve.ConsoleURL, decisionID)
	if u == "" {
		return
	}
	s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	if !ok {
		return
	}
	if e := s.GetClientCapabilities().Elicitation; e == nil || e.URL == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), elicitWait)
	go func() {
		defer cancel()
		res, err := f.mcp.RequestURLElicitation(ctx, s, "ewp-"+decisionID, u,
			"An operator must approve decision "+decisionID+" before this tool call can run. Open the console to review it.")
		if err != nil {
			f.cfg.Log.Info("elicitation not answered", "decision_id", decisionID, "err", err)
			return
		}
		f.cfg.Log.Info("elicitation answered", "decision_id", decisionID, "action", string(res.Action))
	}()
}
