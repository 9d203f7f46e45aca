package mcp

import (
	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/edgepolicy"
)

// DecisionLogStore is the decision log the server records in (see
// WithDecisionLog), nil without one. ewp-mcp hands the same log to the
// operator console, so the inbox answers the decisions this server made.
func (s *Server) DecisionLogStore() audit.Log {
	if s.decisions == nil {
		return nil
	}
	return s.decisions.Log
}

// EdgePolicies are the edge policies the server's guard enforces (see
// WithGuard), nil without a guard or policies. The operator console shows
// these, the ones actually enforced, rather than reading the file again.
func (s *Server) EdgePolicies() *edgepolicy.Set {
	if s.guard == nil {
		return nil
	}
	return s.guard.Policies()
}
