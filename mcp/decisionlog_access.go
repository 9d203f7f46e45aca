package mcp

import "github.com/ewp-go/ewp/audit"

// DecisionLogStore is the decision log the server records in (see
// WithDecisionLog), nil without one. ewp-mcp hands the same log to the
// operator console, so the inbox answers the decisions this server made.
func (s *Server) DecisionLogStore() audit.Log {
	if s.decisions == nil {
		return nil
	}
	return s.decisions.Log
}
