package front

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/console/consolelink"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/internal/jsonraw"
	"github.com/ewp-go/ewp/internal/termtext"
	"github.com/ewp-go/ewp/warrant"
)

// MetaDecisionID is the _meta key of a forwarded call's result (and of
// every refusal the gate decided) that names its decision in the log.
const MetaDecisionID = "ewp/decision_id"

// Entrance is the gateway's name in the record (gate.ToolCall.Entrance).
const Entrance = "gateway"

// maxMessage bounds the failure message recorded with a result.
const maxMessage = 512

// Approve says where an operator approves a pending decision.
type Approve struct {
	// ConsoleURL is the console's base URL (…/console/); "" without one.
	ConsoleURL string
	// Command is the command line that approves once, without the id:
	// "ewp-audit --db LEDGER approve --once".
	Command string
}

// handle is every listed tool's handler: describe, decide, forward,
// record. Every refusal is a tool error (isError) the agent can read;
// only a failure of the gateway itself is a JSON-RPC error.
func (f *Front) handle(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	t, ok := f.tool(req.Params.Name)
	if !ok {
		return refusal("unknown tool %q: this gateway lists its tools in tools/list", req.Params.Name), nil
	}
	name := ManifestName(t.Server, t.Def.Name)
	p := f.cfg.Principal(ctx)
	if re := recheck(ctx); re != nil {
		// A stdio gateway's --agent, revoked since it started: refused
		// on record, like any call the gate could not judge.
		return f.refuse(ctx, p, name, nil, "refused", &warrant.Error{Code: re.Code, Field: "/agent", Rule: re.Reason}), nil
	}
	args, err := rawArguments(req)
	if err != nil {
		we, ok := err.(*warrant.Error)
		if !ok {
			we = &warrant.Error{Code: CodeInvalidArgument, Field: "/params/arguments", Rule: err.Error()}
		}
		return f.refuse(ctx, p, name, nil, "", we), nil
	}
	if t.Withheld != "" {
		code := t.WithheldCode
		if code == "" {
			code = CodeWithheld
		}
		return f.refuse(ctx, p, name, args, "", &warrant.Error{Code: code, Field: "/params/name",
			Rule: "tool " + req.Params.Name + " is withheld: " + t.Withheld}), nil
	}
	r, err := f.cfg.Manifest.Request(name, args, p)
	if err != nil {
		var we *warrant.Error
		if !errors.As(err, &we) {
			we = &warrant.Error{Code: CodeInvalidArgument, Field: "/params/arguments", Rule: err.Error()}
		}
		return f.refuse(ctx, p, name, args, "refused by the operator's manifest", we), nil
	}
	r.Caller.Transport = transportOf(ctx)
	ans, err := f.cfg.Gate.Decide(ctx, r)
	if err != nil {
		return refusalOf(fmt.Errorf("tool %s refused by the gate: %w", req.Params.Name, err)), nil
	}
	switch ans.Decision {
	case warrant.MayActDecision:
		// What was judged is what runs: the manifest's canonical form of
		// the arguments, when it gave one.
		if r.Call != nil && len(r.Call.Arguments) > 0 {
			args = r.Call.Arguments
		}
		return f.forward(ctx, t, req, args, ans.DecisionID), nil
	case warrant.RequireConfirmation:
		f.elicit(ctx, ans.DecisionID)
		return withDecision(pending(req.Params.Name, ans, f.cfg.Approve), ans.DecisionID), nil
	default:
		return withDecision(denied(req.Params.Name, ans), ans.DecisionID), nil
	}
}

// recheck is identity.Recheck under the gate's default deadline (the
// gateway's gate keeps it): a register that does not answer refuses the
// call in time, never hangs it.
func recheck(ctx context.Context) *identity.RecheckError {
	ctx, cancel := context.WithTimeout(ctx, gate.DefaultTimeout)
	defer cancel()
	return identity.Recheck(ctx)
}

// refuse records a refusal met before the gate could judge the call and
// answers it as a tool error naming its decision, with what, when not
// "", saying who refused.
func (f *Front) refuse(ctx context.Context, p audit.Principal, name string, args json.RawMessage, what string, err *warrant.Error) *mcp.CallToolResult {
	r := gate.Request{Agent: p, Caller: audit.Caller{Transport: transportOf(ctx)},
		Call: &gate.ToolCall{Entrance: Entrance, Name: name, Arguments: args, Recorded: args}}
	rerr := f.cfg.Gate.Refuse(ctx, audit.ToolCall, r, err)
	if what != "" {
		rerr = fmt.Errorf("%s %s: %w", name, what, rerr)
	}
	return refusalOf(rerr)
}

// refusalOf is a refusal as a tool error, with the decision it is on
// record as in _meta when it is.
func refusalOf(err error) *mcp.CallToolResult {
	var rec *gate.RecordedError
	if errors.As(err, &rec) {
		return withDecision(refusal("%v (decision %s)", err, rec.ID), rec.ID)
	}
	return refusal("%v", err)
}

// forward sends the permitted call downstream and records its outcome.
// The decision is already on record; the result is recorded after it,
// whatever it is, so the log says what was done.
func (f *Front) forward(ctx context.Context, t Tool, req mcp.CallToolRequest, args json.RawMessage, decisionID string) *mcp.CallToolResult {
	res, err := f.cfg.Downstreams.Call(ctx, t.Server, t.Def.Name, args, f.progressTo(ctx, req))
	out := audit.Result{DecisionID: decisionID, Time: time.Now().UTC()}
	switch {
	case err != nil:
		out.Status = audit.ResultFailed
		out.Message = bounded(err.Error())
		res = refusal("tool %s: the downstream server %s failed: %v (the call may or may not have taken effect; decision %s)",
			req.Params.Name, t.Server, err, decisionID)
	case res == nil:
		out.Status = audit.ResultFailed
		out.Message = "the downstream answered no result"
		res = refusal("tool %s: the downstream server %s answered no result (decision %s)", req.Params.Name, t.Server, decisionID)
	default:
		out.Status = audit.ResultOK
		if res.IsError {
			out.Status = audit.ResultToolError
		}
		out.SHA256 = resultHash(res)
	}
	if decisionID != "" {
		f.record(context.WithoutCancel(ctx), out)
	}
	return withDecision(res, decisionID)
}

// maxPendingResults bounds the results being recorded after their calls
// were answered; past it a result is recorded before the answer.
const maxPendingResults = 1024

// record records a forwarded call's outcome. The decision is on record
// already, before the call was forwarded; the outcome is written after
// the agent has its answer, off the call's path, unless maxPendingResults
// are in flight (then the caller waits, so a flood cannot queue without
// bound). Close waits for them all. A failure to record is logged: the
// call has run, and its result must not be hidden from the agent.
func (f *Front) record(ctx context.Context, out audit.Result) {
	write := func() {
		if err := f.cfg.Gate.RecordResult(ctx, out); err != nil {
			f.cfg.Log.Error("recording a result failed", "decision_id", out.DecisionID, "err", err)
		}
	}
	select {
	case f.pending <- struct{}{}:
		f.inflight.Add(1)
		go func() {
			defer func() { <-f.pending; f.inflight.Done() }()
			write()
		}()
	default:
		write()
	}
}

// Close waits until every result is recorded.
func (f *Front) Close() { f.inflight.Wait() }

// progressTo passes a forwarded call's progress on to the agent, under
// the token the agent's request named; nil when it named none.
func (f *Front) progressTo(ctx context.Context, req mcp.CallToolRequest) func(Progress) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	token := req.Params.Meta.ProgressToken
	return func(p Progress) {
		n := map[string]any{"progressToken": token, "progress": p.Progress}
		if p.Total != 0 {
			n["total"] = p.Total
		}
		if p.Message != "" {
			n["message"] = p.Message
		}
		if err := f.mcp.SendNotificationToClient(ctx, "notifications/progress", n); err != nil {
			f.cfg.Log.Debug("progress not passed on", "err", err)
		}
	}
}

// resultHash is the sha256 of the result as the downstream sent it,
// before the gateway adds its _meta.
func resultHash(res *mcp.CallToolResult) string {
	b, err := json.Marshal(res)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func bounded(s string) string {
	if len(s) > maxMessage {
		return s[:maxMessage] + "…"
	}
	return s
}

// rawArguments is the call's arguments as JSON: an object, {} when absent.
func rawArguments(req mcp.CallToolRequest) (json.RawMessage, error) {
	// The text as sent, when mcp-go kept it: a decoded value loses the
	// digits of an integer past 2^53, and has a lone surrogate escape
	// already rewritten to U+FFFD, where the manifest would not see it.
	b := bytes.TrimSpace(req.Params.RawArguments)
	if len(b) == 0 || string(b) == "null" {
		if req.Params.Arguments == nil {
			return json.RawMessage("{}"), nil
		}
		var err error
		if b, err = json.Marshal(req.Params.Arguments); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("arguments must be a JSON object")
	}
	if jsonraw.BadText(b) {
		return nil, errLoneSurrogate
	}
	return b, nil
}

// errLoneSurrogate refuses arguments a decoder would silently rewrite, as
// ewp-mcp and the hooks refuse them.
var errLoneSurrogate = &warrant.Error{Code: warrant.CodeLoneSurrogate, Field: "/params/arguments",
	Rule: "holds a lone UTF-16 surrogate escape or invalid UTF-8, which would be read as U+FFFD; send the text as valid UTF-8"}

// withDecision names the decision in the result's _meta.
func withDecision(res *mcp.CallToolResult, decisionID string) *mcp.CallToolResult {
	if decisionID == "" {
		return res
	}
	if res.Meta == nil {
		res.Meta = &mcp.Meta{}
	}
	if res.Meta.AdditionalFields == nil {
		res.Meta.AdditionalFields = map[string]any{}
	}
	res.Meta.AdditionalFields[MetaDecisionID] = decisionID
	return res
}

// refusal is a tool error with an escaped message: the names in it came
// from the agent or a downstream.
func refusal(format string, a ...any) *mcp.CallToolResult {
	return mcp.NewToolResultError(termtext.Escape(fmt.Sprintf(format, a...)))
}

// denied says the gate denied the call, with every layer's reasons.
func denied(tool string, ans gate.Answer) *mcp.CallToolResult {
	return refusal("DENY: the gate refused %s (decision %s): %s", tool, ans.DecisionID, reasons(ans))
}

// pending says the call waits for an operator, and where the operator
// answers. The agent retries the identical call once approved: it never
// handles an approval id.
func pending(tool string, ans gate.Answer, ap Approve) *mcp.CallToolResult {
	var where []string
	if ap.Command != "" {
		where = append(where, "`"+ap.Command+" "+ans.DecisionID+"`")
	}
	if u := consolelink.Decision(ap.ConsoleURL, ans.DecisionID); u != "" {
		where = append(where, "the console: "+u)
	}
	if len(where) == 0 {
		where = append(where, "ewp-audit approve --once "+ans.DecisionID)
	}
	return refusal("REQUIRE_CONFIRMATION: %s needs an operator's approval; it is pending as decision %s (%s). "+
		"An operator approves it once with %s; then retry this identical call, which passes once.",
		tool, ans.DecisionID, reasons(ans), strings.Join(where, " or "))
}

// reasons joins the reasons of the layers that did not permit the call.
func reasons(ans gate.Answer) string {
	var rs []string
	for _, l := range ans.Layers {
		if l.Decision == audit.Verdict(warrant.MayActDecision) || l.Decision == gate.Skipped {
			continue
		}
		for _, r := range l.Reasons {
			rs = append(rs, l.Layer+": "+r)
		}
	}
	if len(rs) == 0 {
		return "no reason given"
	}
	return strings.Join(rs, "; ")
}
