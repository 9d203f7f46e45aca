package hook

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/internal/mcpwire"
	"github.com/ewp-go/ewp/internal/termtext"
)

// Paths of the hook endpoints.
const (
	PathClaudeCode = "/hooks/claude-code"
	PathToolCall   = "/hooks/tool-call"
)

// Authenticate names the principal of an HTTP request, or answers the
// request itself (a 401 with its challenge) and returns false.
// The Caller's Transport and RemoteAddr are filled in by the server.
type Authenticate func(w http.ResponseWriter, r *http.Request) (Caller, bool)

// Server serves the hook endpoints over one Judge.
type Server struct {
	Judge Judge
	Auth  Authenticate
	Where Where
	// Log receives the errors an answer only names as internal; nil: the
	// default logger.
	Log *slog.Logger
	// Hosts are the names a request may give in Host and, when it sends
	// one, Origin: the DNS-rebinding guard every HTTP entrance has, the
	// same check (a web page the user visits must not reach a loopback
	// gate). Nil: any (tests only, or a mux already behind the guard).
	Hosts mcpwire.Hosts
}

// Route adds POST /hooks/claude-code and POST /hooks/tool-call to mux.
func (s *Server) Route(mux *http.ServeMux) {
	mux.HandleFunc("POST "+PathClaudeCode, s.serve(ClaudeCode, claudeRefusal))
	mux.HandleFunc("POST "+PathToolCall, s.serve(ToolCall, toolCallRefusal))
}

type answerFunc func(ctx context.Context, j Judge, c Caller, body []byte, w Where) ([]byte, error)

// serve reads the bounded body, authenticates and answers. Whatever
// fails, the answer blocks the tool: Claude Code gets a deny it obeys
// even without "onFailure": "block", the plugin a DENY with a 4xx/5xx.
func (s *Server) serve(answer answerFunc, refusal func(http.ResponseWriter, int, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if why := s.hostProblem(r); why != "" {
			refusal(w, http.StatusForbidden, "ewp: refused: "+why)
			return
		}
		c, ok := s.Auth(w, r)
		if !ok {
			return
		}
		c.Transport, c.RemoteAddr = "http", r.RemoteAddr
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		if err != nil {
			refusal(w, http.StatusRequestEntityTooLarge, "ewp: refused: the hook request is over the limit of "+strconv.Itoa(MaxBody)+" bytes, or unreadable")
			return
		}
		out, err := answer(r.Context(), s.Judge, c, body, s.Where)
		if err != nil {
			status, msg := s.failure(r, err)
			refusal(w, status, termtext.Escape(msg))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	}
}

// hostProblem says why r's Host or Origin is not this server's, or "".
func (s *Server) hostProblem(r *http.Request) string {
	if s.Hosts == nil {
		return ""
	}
	if why, ok := s.Hosts.Check(r); !ok {
		return termtext.Escape(why)
	}
	return ""
}

// failure is the status and text of err: a refusal of the input says
// why; anything else is logged and named as internal (its text may hold
// the server's paths).
func (s *Server) failure(r *http.Request, err error) (int, string) {
	if errors.Is(err, ErrInput) {
		return http.StatusBadRequest, "ewp: refused: " + err.Error()
	}
	if errors.Is(err, audit.ErrNotFound) {
		return http.StatusNotFound, "ewp: refused: no decision of this agent is recorded for this call"
	}
	l := s.Log
	if l == nil {
		l = slog.Default()
	}
	l.Error("hook: the gate could not decide", "path", r.URL.Path, "error", err)
	return http.StatusInternalServerError, "ewp: the gate could not decide (an internal error, in the server's log); the call is blocked"
}

// claudeRefusal answers a failure as a PreToolUse deny with status 200:
// Claude Code obeys a deny whatever the hook's onFailure says, where a
// 4xx or 5xx blocks only with "onFailure": "block".
func claudeRefusal(w http.ResponseWriter, status int, msg string) {
	out, _ := claudeOutput(permDeny, msg)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-EWP-Status", strconv.Itoa(status))
	w.Write(out)
}

func toolCallRefusal(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(ToolCallAnswer{Decision: audit.VerdictDeny, Reason: msg})
}
