package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/warrant"
)

// demoAgent is the client name the demo's own agent call is recorded under.
const demoAgent = "ewp-demo-agent"

// demoAction is the call the demo's agent makes: deleting a protected
// file, which the demo edge policies send to a person
// (REQUIRE_CONFIRMATION). The printed retry repeats it exactly.
func demoAction() map[string]any {
	return map[string]any{
		"proposition_id": "P-api-cert-valid",
		"action": map[string]any{"action_id": "demo-cleanup-1", "kind": "delete", "risk": "high", "reversible": false,
			"concepts": []any{"delete", "file"}, "tool_name": "rm", "cardinality": "single",
			"arguments": map[string]any{"path": "protected/report.txt"}},
	}
}

// seed makes the demo's pending confirmation by asking the server itself,
// through MCP, as an agent would: the decision is recorded by the gate
// like any other.
func (d *demoRun) seed(ctx context.Context, srv *mcp.Server) (string, error) {
	c, err := client.NewInProcessClient(srv.MCPServer())
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return "", err
	}
	init := mcpgo.InitializeRequest{}
	init.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcpgo.Implementation{Name: demoAgent, Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return "", err
	}
	req := mcpgo.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = audit.ToolMayAct, demoAction()
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Decision   warrant.Verdict `json:"decision"`
		DecisionID string          `json:"decision_id"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Decision != warrant.RequireConfirmation || out.DecisionID == "" {
		return "", fmt.Errorf("the demo's may_act was answered %s, not REQUIRE_CONFIRMATION with a decision_id", b)
	}
	return out.DecisionID, nil
}

// start seeds a fresh demo's story and returns the hook that prints the
// hints once the server's address is known.
func (d *demoRun) start(ctx context.Context, cfg config, srv *mcp.Server, w io.Writer) (func(string, bool), error) {
	d.audit = auditPath(cfg)
	if d.fresh && srv.DecisionLogStore() != nil {
		if _, err := d.seed(ctx, srv); err != nil {
			return nil, fmt.Errorf("the demo's pending confirmation: %w", err)
		}
	}
	pendingID := pendingDecision(ctx, srv.DecisionLogStore())
	return func(addr string, consoleOn bool) { d.hints(w, pendingID, addr, consoleOn) }, nil
}

// pendingDecision is the oldest decision still waiting in the demo's log, for the
// hints; "" when none (all answered).
func pendingDecision(ctx context.Context, l audit.Log) string {
	if l == nil {
		return ""
	}
	ds, err := l.List(ctx, audit.Filter{Pending: true, Limit: 1})
	if err != nil || len(ds) == 0 {
		return ""
	}
	return ds[0].ID
}

// hints prints what to try next, every command complete for this run:
// the pending decision listed and approved with ewp-audit (its log, its
// key), the agent's retry with the approval, and the console. addr is ""
// on stdio; console is whether the console is served.
func (d *demoRun) hints(w io.Writer, pendingID, addr string, consoleOn bool) {
	if d.audit == "" {
		fmt.Fprintf(w, "\newp-mcp demo: --audit off, so nothing is recorded and nothing waits for you\n\n")
		return
	}
	logFlag := "--audit " + shellQuote(d.audit)
	fmt.Fprintf(w, "\newp-mcp demo: the story so far\n")
	fmt.Fprintf(w, "  P-db-major-version: a remembered version that a psql check contradicts\n")
	fmt.Fprintf(w, "  P-backup-restores: a restore drill on %s made it CURRENT; STALE again since %s (30-day policy)\n",
		demoDrill.Format("2 Jan 2006"), demoDrill.AddDate(0, 0, 30).Format("2 Jan 2006"))
	if pendingID == "" {
		fmt.Fprintf(w, "  no decision is waiting for you; ask may_act to delete protected/report.txt to make one\n")
	} else {
		fmt.Fprintf(w, "  the agent %q asked to delete protected/report.txt: decision %s waits for you\n", demoAgent, pendingID)
	}
	fmt.Fprintf(w, "\nTry next (ewp-audit is bin/ewp-audit in a clone, or go run ./cmd/ewp-audit):\n")
	fmt.Fprintf(w, "  $ ewp-audit list --pending %s\n", logFlag)
	if pendingID != "" {
		fmt.Fprintf(w, "  $ ewp-audit approve %s --once --key %s %s\n", pendingID, shellQuote(d.key), logFlag)
	}
	if addr == "" {
		fmt.Fprintf(w, "  then the agent repeats its may_act call with \"approval_id\" (what approve printed)\n")
		fmt.Fprintf(w, "  the console is served over HTTP only, with an operator token:\n")
		d.consoleHint(w, "127.0.0.1:8765")
		return
	}
	url := "http://" + addr + mcp.EndpointPath
	retry := demoAction()
	retry["approval_id"] = "APPROVAL_ID"
	fmt.Fprintf(w, "  the agent's retry, with the approval_id approve printed in place of APPROVAL_ID:\n")
	fmt.Fprintf(w, "  $ %s\n", curlLine(url, audit.ToolMayAct, retry))
	if pendingID != "" {
		fmt.Fprintf(w, "  where the agent's call stands (pending, approved, rejected, expired):\n")
		fmt.Fprintf(w, "  $ %s\n", curlLine(url, "decision_get", map[string]any{"decision_id": pendingID}))
	}
	if consoleOn {
		fmt.Fprintf(w, "  the console: open http://%s%s and sign in with your EWP_OPERATOR_TOKEN\n\n", addr, console.BasePath)
		return
	}
	fmt.Fprintf(w, "  the console is off: restart with an operator token to open it at http://%s%s\n", addr, console.BasePath)
	d.consoleHint(w, addr)
}

// consoleHint prints how to serve this demo with the console at addr: on
// its files when they are kept, else a new demo.
func (d *demoRun) consoleHint(w io.Writer, addr string) {
	fmt.Fprintf(w, "  $ export EWP_OPERATOR_TOKEN=\"$(openssl rand -hex 32)\"; echo \"$EWP_OPERATOR_TOKEN\"\n")
	if d.kept {
		fmt.Fprintf(w, "  $ ewp-mcp --demo --demo-dir %s --http %s\n\n", shellQuote(d.dir), addr)
		return
	}
	fmt.Fprintf(w, "  (a new demo: this one's directory goes on exit; --demo-dir DIR keeps one across restarts)\n")
	fmt.Fprintf(w, "  $ ewp-mcp --demo --http %s\n\n", addr)
}

// curlLine is a curl command calling tool with args at url.
func curlLine(url, tool string, args map[string]any) string {
	type params struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	body, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int    `json:"id"`
		Method  string `json:"method"`
		Params  params `json:"params"`
	}{"2.0", 1, "tools/call", params{tool, args}})
	return fmt.Sprintf("curl -s %s -H 'Content-Type: application/json' -H 'Accept: application/json' -d %s", url, shellQuote(string(body)))
}

// shellQuote quotes s for a POSIX shell: as it is when it holds only
// characters no shell acts on, else in single quotes.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
