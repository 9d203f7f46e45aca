package mcp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ewp-go/ewp/warrant"
)

// Exact keys. encoding/json matches object keys to struct fields without
// regard to case, and mcp-go decodes every message that way, so
// {"method":"ping","Method":"tools/list"} would run tools/list behind the
// pre-filter's back, and a message with only "ID" would be answered. The
// filter therefore refuses any key of the message or of its params that
// differs from a protocol key only by case, and a key given twice (which
// encoding/json resolves last-wins). Tool arguments need no such rule:
// they are split with exact keys and unknown ones are refused by name.

// envelopeKeys are the members of a JSON-RPC 2.0 message.
var envelopeKeys = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// paramKeys are the params members of the MCP requests mcp-go decodes
// into structs (initialize, tools/call, resources/read, prompts/get, the
// list methods, logging, completion, subscriptions).
var paramKeys = []string{
	"name", "arguments", "_meta", "task", "inputResponses", "requestState",
	"uri", "cursor", "protocolVersion", "capabilities", "clientInfo",
	"level", "ref", "argument", "context",
}

// envelopeProblem says what is wrong with the message's own members
// (dup is splitMembers' repeated key), or "".
func envelopeProblem(m message, dup string) string {
	if dup != "" {
		return fmt.Sprintf("the key %q appears more than once in the message; give each member once", dup)
	}
	if key, want := caseVariant(m, envelopeKeys); key != "" {
		return fmt.Sprintf("%q is not a JSON-RPC member; keys are matched exactly (did you mean %q?)", key, want)
	}
	for _, name := range []string{"id", "method"} {
		if raw, ok := m[name]; ok && badText(raw) {
			return fmt.Sprintf("%q holds a lone UTF-16 surrogate escape or invalid UTF-8, which a JSON decoder "+
				"silently rewrites; it is refused, never echoed altered", name)
		}
	}
	return ""
}

// paramsProblem says what is wrong with the keys and texts of params
// (split by the caller, dup its repeated key), or "" ; data, when set,
// carries the EWP code of a text refusal as resource errors do. The tool
// arguments of tools/call are left to the tool (toolSpec.call), which
// refuses a bad text as a tool error naming the argument.
func (m message) paramsProblem(p message, dup string) (problem string, data *toolError) {
	if dup != "" {
		return fmt.Sprintf("the key params.%s appears more than once; give each member once", dup), nil
	}
	if key, want := caseVariant(p, paramKeys); key != "" {
		return fmt.Sprintf("params.%s is not a parameter; keys are matched exactly (did you mean %q?)", key, want), nil
	}
	if problem := clientInfoProblem(m, p); problem != "" {
		return problem, &toolError{Error: warrant.CodeLimitExceeded, Message: problem}
	}
	skip := ""
	if m.method() == "tools/call" {
		skip = "arguments"
	}
	bad := false
	for k, raw := range p {
		if k != skip && badText(raw) {
			bad = true
			break
		}
	}
	if !bad {
		return "", nil
	}
	for _, k := range sortedKeys(p) { // the first in key order, so the message is stable
		if err := textRefusal(join("params", k), p[k]); k != skip && err != nil {
			return err.Error(), &toolError{Error: err.Code, Message: err.Message()}
		}
	}
	return "", nil
}

// caseVariant returns a key of m that equals one of known only when case
// is ignored (as encoding/json ignores it), and the key it stands for;
// "" when there is none. The smallest such key is reported, so the
// message does not depend on map order.
func caseVariant(m message, known []string) (key, want string) {
	for k := range m {
		if slices.Contains(known, k) || (key != "" && k > key) {
			continue
		}
		for _, w := range known {
			if strings.EqualFold(k, w) {
				key, want = k, w
				break
			}
		}
	}
	return key, want
}

func sortedKeys(m message) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
