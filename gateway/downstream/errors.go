package downstream

import (
	"errors"
	"fmt"
)

// Codes of the errors this package returns. The EWP_DOWNSTREAM_ ones say
// the server failed; the EWP_REFUSE_ ones say the gateway would not ask it.
const (
	// CodeUnavailable: the server is not connected (it crashed, exited, was
	// never reached, or is waiting out its restart backoff) or the
	// connection broke during the call.
	CodeUnavailable = "EWP_DOWNSTREAM_UNAVAILABLE"
	// CodeTimeout: the server did not answer within its timeout.
	CodeTimeout = "EWP_DOWNSTREAM_TIMEOUT"
	// CodeProtocol: the server broke the protocol (a line over the limit,
	// garbage on stdout, too many tools); it is restarted.
	CodeProtocol = "EWP_DOWNSTREAM_PROTOCOL"
	// CodeError: the server answered the request with a JSON-RPC error
	// (not a tool error, which is a result with isError).
	CodeError = "EWP_DOWNSTREAM_ERROR"
	// CodeCancelled: the caller's context ended first; the server was
	// sent notifications/cancelled (stdio) or the stream was closed (HTTP).
	CodeCancelled = "EWP_DOWNSTREAM_CANCELLED"
	// CodeNotPassed: the config does not pass this server's resources or
	// prompts through.
	CodeNotPassed = "EWP_DOWNSTREAM_NOT_PASSED"

	// CodeToolChanged: the tool's definition differs from the one pinned.
	CodeToolChanged = "EWP_REFUSE_TOOL_CHANGED"
	// CodeToolUnpinned: the tool was never pinned.
	CodeToolUnpinned = "EWP_REFUSE_TOOL_UNPINNED"
	// CodeUnknownTool: no server lists a tool of that name.
	CodeUnknownTool = "EWP_REFUSE_UNKNOWN_TOOL"
)

// Error is a failed or refused downstream request. Message is written
// for the agent and names the server; it never holds a header or an
// environment value from the config. What a server wrote (Err) may be
// anything: escape it before a terminal shows it.
type Error struct {
	Code    string
	Server  string
	Tool    string // SERVER__TOOL, "" for a request that is not a call
	Message string
	Err     error // the cause, if any
}

func (e *Error) Error() string {
	s := e.Code + ": " + e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf is err's code, "" when err is not an *Error.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func errorf(code, server, tool string, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Server: server, Tool: tool, Err: cause, Message: fmt.Sprintf(format, args...)}
}
