package hook

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// The generic tool-call endpoint's request, for a client plugin (the
// OpenClaw plugin's before_tool_call and after_tool_call):
//
//	{"event": "before", "tool": "openclaw/write", "arguments": {…},
//	 "session": "…", "call_id": "…", "agent": "main"}
//	{"event": "after", "session": "…", "call_id": "…",
//	 "status": "ok"|"tool_error", "message": "…"}
//
// event defaults to "before". tool is the manifest's name, NAMESPACE/NAME.
// session and call_id, when given, name the call across before and after.
// agent is the client's own name for the agent, recorded as the client
// name; who asks is the bearer token's principal, never this.
var toolCallKeys = []string{"event", "tool", "arguments", "session", "call_id", "agent", "status", "message", "sha256"}

// ToolCallAnswer is the endpoint's answer to "before".
type ToolCallAnswer struct {
	Decision   audit.Verdict `json:"decision"`
	DecisionID string        `json:"decision_id,omitempty"`
	// Reason is the text to show (escaped for a terminal).
	Reason string `json:"reason"`
	// ConfirmBy, on REQUIRE_CONFIRMATION: "user" or "operator".
	ConfirmBy string `json:"confirm_by,omitempty"`
}

type toolCallInput struct {
	event, tool, session, callID, agent, status, message, sha string
	args                                                      json.RawMessage
}

func decodeToolCall(body []byte) (*toolCallInput, error) {
	if len(body) > MaxBody {
		return nil, refuse(warrant.CodeLimitExceeded, "", "the request is %d bytes; the limit is %d", len(body), MaxBody)
	}
	m, err := members("", body, toolCallKeys)
	if err != nil {
		return nil, err
	}
	in := &toolCallInput{}
	for _, f := range []struct {
		dst *string
		key string
	}{{&in.event, "event"}, {&in.tool, "tool"}, {&in.session, "session"}, {&in.callID, "call_id"},
		{&in.agent, "agent"}, {&in.status, "status"}, {&in.message, "message"}, {&in.sha, "sha256"}} {
		if *f.dst, err = str(m, "", f.key, false); err != nil {
			return nil, err
		}
	}
	// The client's agent name is recorded (Caller.ClientName) whether or
	// not the call has ids, so it is bounded here, not with the key.
	if err := bounded(field{"agent", in.agent}); err != nil {
		return nil, err
	}
	if in.event == "" {
		in.event = "before"
	}
	if in.event == "before" {
		if in.args, err = object(m, "", "arguments", false); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func (in *toolCallInput) key() (string, error) {
	return callKey(EntranceToolCall, field{"session", in.session}, field{"call_id", in.callID})
}

// ToolName checks a manifest name given whole: NAMESPACE/NAME, each part
// as ClaudeName allows.
func ToolName(name string) error {
	ns, tool, ok := strings.Cut(name, "/")
	if !ok || ns == "" || tool == "" || strings.Contains(tool, "/") {
		return refuse(warrant.CodeInvalidAction, "tool", "%q is not NAMESPACE/NAME (e.g. openclaw/write)", name)
	}
	_, err := ClaudeName(ns + tool) // the same characters and length
	if err != nil {
		return refuse(warrant.CodeInvalidAction, "tool", "%q: %v", name, err)
	}
	return nil
}

// ToolCall answers one request of the generic endpoint for agent.
func ToolCall(ctx context.Context, j Judge, c Caller, body []byte, w Where) ([]byte, error) {
	in, err := decodeToolCall(body)
	if err != nil {
		return nil, err
	}
	key, err := in.key()
	if err != nil {
		return nil, err
	}
	switch in.event {
	case "before":
		if err := ToolName(in.tool); err != nil {
			return nil, err
		}
		entrance := EntranceToolCall
		if strings.HasPrefix(in.tool, EntranceOpenClaw+"/") {
			entrance = EntranceOpenClaw
		}
		v, err := j.Judge(ctx, Query{Caller: c, Entrance: entrance, Tool: in.tool, Arguments: in.args,
			IdempotencyKey: key, Client: in.agent})
		if err != nil {
			return nil, err
		}
		a := ToolCallAnswer{Decision: v.Decision, DecisionID: v.DecisionID, Reason: Reason(v, w)}
		if v.Decision == audit.VerdictRequireConfirmation {
			a.ConfirmBy = confirmBy(v.ConfirmBy)
		}
		return json.Marshal(a)
	case "after":
		return toolCallAfter(ctx, j, c, in, key)
	}
	return nil, refuse(warrant.CodeInvalidAction, "event", "is %q; it is \"before\" or \"after\"", in.event)
}

func toolCallAfter(ctx context.Context, j Judge, c Caller, in *toolCallInput, key string) ([]byte, error) {
	if key == "" {
		return nil, refuse(warrant.CodeInvalidAction, "call_id", "session and call_id are required after a call: they name its decision")
	}
	st := audit.ResultStatus(in.status)
	if st != audit.ResultOK && st != audit.ResultToolError && st != audit.ResultNotRun {
		return nil, refuse(warrant.CodeInvalidAction, "status", "is %q; it is ok, tool_error or not_run", in.status)
	}
	if in.sha != "" && !isSHA256Hex(in.sha) {
		return nil, refuse(warrant.CodeInvalidAction, "sha256", "must be 64 lower-case hex digits")
	}
	id, err := j.Recorded(ctx, c, key)
	if err != nil {
		return nil, err
	}
	res := audit.Result{DecisionID: id, Time: time.Now().UTC(), Status: st, SHA256: in.sha, Message: truncate(in.message, maxResultMessage)}
	if err := j.RecordResult(ctx, c, res); err != nil {
		return nil, err
	}
	return []byte(`{"recorded":true}`), nil
}

func confirmBy(s string) string {
	if s == ConfirmUser {
		return ConfirmUser
	}
	return "operator"
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
