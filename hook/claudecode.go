package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// Claude Code's hook input: the members the hook reads (matched exactly)
// among the others it sends (session_id, transcript_path, cwd, prompt_id,
// permission_mode, effort, …), which are left alone.
var claudeKeys = []string{"hook_event_name", "session_id", "tool_name", "tool_input", "tool_use_id", "tool_response", "error", "cwd"}

// The events the hook answers.
const (
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
)

// Claude Code's permissionDecision values.
const (
	permAllow = "allow"
	permDeny  = "deny"
	permAsk   = "ask"
)

// maxToolName bounds a tool name (Claude Code's are short; an MCP tool's
// is mcp__SERVER__TOOL, each part at most 64).
const maxToolName = 200

// maxResultMessage bounds the error text recorded for a failed tool.
const maxResultMessage = 512

// ClaudeName maps a Claude Code tool name to the manifest's name:
// mcp__SERVER__TOOL is SERVER/TOOL (the server is the part before the
// first "__" after the prefix), any other name is claude-code/NAME.
func ClaudeName(name string) (string, error) {
	const field = "tool_name"
	if len(name) > maxToolName {
		return "", refuse(warrant.CodeLimitExceeded, field, "is %d bytes; the limit is %d", len(name), maxToolName)
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", refuse(warrant.CodeInvalidAction, field, "may hold only ASCII letters, digits, '_', '-' and '.'; it holds %q", r)
		}
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		server, tool, ok := strings.Cut(rest, "__")
		if !ok || server == "" || tool == "" {
			return "", refuse(warrant.CodeInvalidAction, field, "%q names an MCP tool without a server or a tool (mcp__SERVER__TOOL)", name)
		}
		return server + "/" + tool, nil
	}
	if name == "" {
		return "", refuse(warrant.CodeInvalidAction, field, "must not be empty")
	}
	return EntranceClaudeCode + "/" + name, nil
}

// claudeInput is the hook input, decoded.
type claudeInput struct {
	event, session, tool, toolUseID, cwd string
	input, response                      json.RawMessage
	errText                              string
}

func decodeClaude(body []byte) (*claudeInput, error) {
	if len(body) > MaxBody {
		return nil, refuse(warrant.CodeLimitExceeded, "", "the hook input is %d bytes; the limit is %d", len(body), MaxBody)
	}
	m, err := members("", body, claudeKeys)
	if err != nil {
		return nil, err
	}
	in := &claudeInput{response: m["tool_response"]}
	for _, f := range []struct {
		dst      *string
		key      string
		required bool
	}{
		{&in.event, "hook_event_name", true}, {&in.tool, "tool_name", true},
		{&in.session, "session_id", false}, {&in.toolUseID, "tool_use_id", false}, {&in.errText, "error", false},
		{&in.cwd, "cwd", false},
	} {
		if *f.dst, err = str(m, "", f.key, f.required); err != nil {
			return nil, err
		}
	}
	if in.input, err = object(m, "", "tool_input", true); err != nil {
		return nil, err
	}
	return in, nil
}

// key is the call's idempotency key across its Pre and Post hooks: "" when
// Claude Code gave no ids (a retry is then decided again).
func (in *claudeInput) key() (string, error) {
	return callKey(EntranceClaudeCode, field{"session_id", in.session}, field{"tool_use_id", in.toolUseID})
}

// ClaudeCode answers one Claude Code hook call for agent: body is the
// hook input, the answer is the hook output JSON. PreToolUse asks the
// judge and answers permissionDecision; PostToolUse and
// PostToolUseFailure record what the tool did and answer {}. An error
// means no answer: the caller fails closed (exit 2, or an HTTP error the
// installed settings turn into a block).
func ClaudeCode(ctx context.Context, j Judge, c Caller, body []byte, w Where) ([]byte, error) {
	in, err := decodeClaude(body)
	if err != nil {
		return nil, err
	}
	name, err := ClaudeName(in.tool)
	if err != nil {
		return nil, err
	}
	key, err := in.key()
	if err != nil {
		return nil, err
	}
	switch in.event {
	case PreToolUse:
		v, err := j.Judge(ctx, Query{Caller: c, Entrance: EntranceClaudeCode, Tool: name,
			Arguments: in.input, IdempotencyKey: key, Root: in.cwd})
		if err != nil {
			return nil, err
		}
		return preAnswer(v, w)
	case PostToolUse, PostToolUseFailure:
		if key == "" {
			return nil, refuse(warrant.CodeInvalidAction, "tool_use_id", "is required on %s: it names the decision whose result is recorded", in.event)
		}
		id, err := j.Recorded(ctx, c, key)
		if err != nil {
			return nil, err
		}
		if err := j.RecordResult(ctx, c, claudeResult(in, id)); err != nil {
			return nil, err
		}
		return []byte("{}"), nil
	}
	return nil, refuse(warrant.CodeInvalidAction, "hook_event_name", "is %q; this hook answers %s, %s and %s",
		in.event, PreToolUse, PostToolUse, PostToolUseFailure)
}

func claudeResult(in *claudeInput, id string) audit.Result {
	res := audit.Result{DecisionID: id, Time: time.Now().UTC(), Status: audit.ResultOK}
	if len(in.response) > 0 {
		sum := sha256.Sum256(in.response)
		res.SHA256 = hex.EncodeToString(sum[:])
	}
	if in.event == PostToolUseFailure {
		res.Status, res.Message = audit.ResultToolError, truncate(in.errText, maxResultMessage)
	}
	return res
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// preAnswer is the PreToolUse hook output for v.
func preAnswer(v Verdict, w Where) ([]byte, error) {
	decision := permDeny
	switch {
	case v.Decision == audit.VerdictMayAct:
		decision = permAllow
	case v.Decision == audit.VerdictRequireConfirmation && v.ConfirmBy == ConfirmUser:
		decision = permAsk
	}
	return claudeOutput(decision, Reason(v, w))
}

func claudeOutput(decision, reason string) ([]byte, error) {
	type output struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	}
	return json.Marshal(struct {
		HookSpecificOutput output `json:"hookSpecificOutput"`
	}{output{PreToolUse, decision, reason}})
}
