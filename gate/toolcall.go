package gate

import "encoding/json"

// ToolCall is a tool call an entrance (the gateway, a client hook) asks
// the gate about, described by the operator's manifest rather than by the
// agent.
type ToolCall struct {
	Entrance  string          // "gateway" | "claude-code" | "openclaw" | "tool-call"
	Name      string          // "SERVER/TOOL" as the manifest matched it (recorded as tool_name)
	Rule      string          // the manifest rule that matched (its match pattern, or "default")
	Arguments json.RawMessage // canonical JSON of the arguments (hashed: arguments_hash)
	Recorded  json.RawMessage // the arguments with the manifest's redactions, for the record
	ConfirmBy string          // "operator" (default) | "user"
}
