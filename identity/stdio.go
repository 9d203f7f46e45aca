package identity

import (
	"context"
	"errors"
	"fmt"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
)

// CodeAgentRevoked refuses a call of a server started for one agent
// (--agent over stdio) after the operator revoked that agent.
const CodeAgentRevoked = "EWP_REFUSE_AGENT_REVOKED"

// A stdio server started for one agent has no credential on each call to
// look up, as HTTP has: the operator named the agent once, at start. So
// the agent rides on the context with its credential's hash, and Recheck
// looks that hash up again (one indexed read) on every call: a
// revocation takes effect on the next call there too.
type stdioAgentKey struct{}

type stdioAgent struct {
	agents audit.Agents
	name   string
	sum    string
}

// WithStdioAgent is ctx serving rec, an agent of agents (AgentNamed found
// it): its principal, and what Recheck needs.
func WithStdioAgent(ctx context.Context, agents audit.Agents, rec *audit.AgentRecord) context.Context {
	ctx = WithPrincipal(ctx, rec.Principal())
	return context.WithValue(ctx, stdioAgentKey{}, &stdioAgent{agents: agents, name: rec.Name, sum: rec.CredentialSHA256})
}

// Recheck is nil unless ctx serves an agent given to WithStdioAgent that
// has since been revoked, or whose register cannot be read: then the
// call must be refused, for the reason and with the code it gives. The
// lookup ends with ctx: give it the call's deadline.
func Recheck(ctx context.Context) *RecheckError {
	s, _ := ctx.Value(stdioAgentKey{}).(*stdioAgent)
	if s == nil {
		return nil
	}
	rec, err := s.agents.AgentByCredential(ctx, s.sum)
	if errors.Is(err, audit.ErrNotFound) || err == nil && (!rec.RevokedAt.IsZero() || rec.Name != s.name) {
		return &RecheckError{Code: CodeAgentRevoked, Reason: fmt.Sprintf(
			"agent %q was revoked after this server started for it; the operator adds a new agent (ewp-audit agents add) and restarts the server with --agent NAME", s.name)}
	}
	if err != nil {
		return &RecheckError{Code: gate.CodeStoreUnavailable, Reason: fmt.Sprintf(
			"agent %q: the agent register could not be read, so the call is refused: %v", s.name, err)}
	}
	return nil
}

// RecheckError is why Recheck refuses a call, with its EWP code.
type RecheckError struct {
	Code   string
	Reason string
}

func (e *RecheckError) Error() string { return e.Reason }
