// Package hook is the gate's entrance inside agent clients: Claude Code's
// PreToolUse/PostToolUse hooks (its http and command types) and a
// generic tool-call endpoint (the OpenClaw plugin's before_tool_call).
// It only translates: a client's hook JSON becomes a Query (who, which
// tool as the manifest names it, which arguments), a Judge (the manifest
// and the gate) decides and records it, and the Verdict becomes the
// client's answer. No rule of the gate lives here.
package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

// MaxBody bounds one hook request (the client's whole hook JSON). A Write
// carries the file's content in its arguments, so it is larger than an
// MCP call's; a larger body is refused, which blocks the tool.
const MaxBody = 4 << 20

// MaxKeyBytes bounds the session and tool-use ids that make a query's
// idempotency key (Claude Code's are UUIDs and toolu_ ids, under 64).
const MaxKeyBytes = 256

// field is one named string of a hook input, for checks that name it.
type field struct{ name, value string }

// bounded refuses the first of fields, in order, over MaxKeyBytes.
func bounded(fields ...field) error {
	for _, f := range fields {
		if len(f.value) > MaxKeyBytes {
			return refuse(warrant.CodeLimitExceeded, f.name, "is %d bytes; the limit is %d", len(f.value), MaxKeyBytes)
		}
	}
	return nil
}

// callKey is a call's idempotency key across its hooks,
// ENTRANCE:SESSION:ID: "" when the client gave either id empty (a retry
// is then decided again).
func callKey(entrance string, session, id field) (string, error) {
	if session.value == "" || id.value == "" {
		return "", nil
	}
	if err := bounded(session, id); err != nil {
		return "", err
	}
	return entrance + ":" + session.value + ":" + id.value, nil
}

// Entrances, as the decision records them (gate.ToolCall.Entrance).
const (
	EntranceClaudeCode = "claude-code"
	EntranceToolCall   = "tool-call"
	EntranceOpenClaw   = "openclaw"
)

// Caller is who asks, as the transport established it.
type Caller struct {
	Principal audit.Principal
	// Credential is the credential's name for the record (identity's
	// Identity.Record: "agent:NAME", …); idempotency keys are scoped by it.
	Credential string
	// Transport is "http" or "stdio" (the command hook over a local
	// ledger); RemoteAddr the HTTP peer.
	Transport, RemoteAddr string
}

// Query is one tool call a client is about to make, decoded.
type Query struct {
	Caller   Caller
	Entrance string
	// Tool is the manifest's name for it: "claude-code/Write",
	// "SERVER/TOOL", "openclaw/write".
	Tool string
	// Arguments are the tool's arguments, a JSON object as the client sent
	// them (the manifest canonicalises them).
	Arguments json.RawMessage
	// IdempotencyKey names the call across its Pre and Post hooks (and a
	// client's retry): the entrance, the session and the tool-use id; ""
	// when the client gave none.
	IdempotencyKey string
	// Root is the directory relative paths resolve against (Claude Code's
	// cwd); "" for the manifest's configured root.
	Root string
	// Client is the client's own name for its agent (OpenClaw's agent
	// id), for the record only: who asks is Agent.
	Client string
}

// Verdict is the gate's answer to a Query.
type Verdict struct {
	Decision   audit.Verdict // MAY_ACT, REQUIRE_CONFIRMATION or DENY
	DecisionID string
	// Reasons are the restricting layers' reasons (empty for MAY_ACT).
	Reasons []string
	// ConfirmBy says who may confirm a REQUIRE_CONFIRMATION: "user" (the
	// person at the client) or "operator" ("" reads as operator).
	ConfirmBy string
}

// ConfirmUser is the manifest's confirm value that lets the person at the
// keyboard confirm (Claude Code's "ask").
const ConfirmUser = "user"

// Judge is what the hooks need of the manifest and the gate.
type Judge interface {
	// Judge describes q's call by the manifest, asks the gate and returns
	// the recorded decision. An error blocks the call.
	Judge(ctx context.Context, q Query) (Verdict, error)
	// Recorded finds the decision an earlier Judge recorded for c under
	// key; audit.ErrNotFound when there is none ("" without a log).
	Recorded(ctx context.Context, c Caller, key string) (string, error)
	// RecordResult records what the call did, refusing a decision that is
	// not c's agent's.
	RecordResult(ctx context.Context, c Caller, res audit.Result) error
}

// Where tells a person how the operator approves a pending call.
type Where struct {
	// ConsoleURL is the operator console's root, e.g.
	// http://127.0.0.1:8765/console/ ("" when none); the decision's page
	// is consolelink.Decision(ConsoleURL, id): …/console/decision?id=ID.
	ConsoleURL string
	// DB is the ledger flag ewp-audit needs ("--db PATH"), "" when the
	// default reaches it.
	DB string
}

// ErrInput is the class of a request the hook refuses as malformed (400
// over HTTP); the error is a *warrant.Error whose code and message name
// the field and the rule.
var ErrInput = errors.New("hook: bad request")

// inputError is a refusal of the request's bytes.
type inputError struct{ err *warrant.Error }

func (e inputError) Error() string        { return e.err.Error() }
func (e inputError) Is(target error) bool { return target == ErrInput }
func (e inputError) Unwrap() error        { return e.err }

func refuse(code, field, rule string, args ...any) error {
	return inputError{&warrant.Error{Code: code, Field: field, Rule: fmt.Sprintf(rule, args...)}}
}
