package identity

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/ewp-go/ewp/audit"
)

// AgentCredentialPrefix starts every agent credential (audit's).
const AgentCredentialPrefix = audit.AgentCredentialPrefix

// agentSecretChars is the length of the credential's random part: 32
// bytes, base64url without padding.
const agentSecretChars = 43

// IsAgentCredential is whether s has the shape of an agent credential
// (audit.NewAgentCredential makes them): a malformed one is refused
// before the register is asked.
func IsAgentCredential(s string) bool {
	rest, ok := strings.CutPrefix(s, AgentCredentialPrefix)
	if !ok || len(rest) != agentSecretChars {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(rest)
	return err == nil && len(b) == 32
}

// AgentNamed is the live agent called name in the register, for a server
// started for one agent (ewp-mcp --agent NAME over stdio): an error names
// what is wrong when it is unknown or revoked.
func AgentNamed(ctx context.Context, agents audit.Agents, name string) (*audit.AgentRecord, error) {
	if agents == nil {
		return nil, fmt.Errorf("agent %q: this decision log keeps no agent register", name)
	}
	list, err := agents.ListAgents(ctx)
	if err != nil {
		return nil, fmt.Errorf("agent %q: reading the agent register: %w", name, err)
	}
	for i := range list {
		if list[i].Name != name {
			continue
		}
		if !list[i].RevokedAt.IsZero() {
			return nil, fmt.Errorf("agent %q was revoked at %s; add a new agent with ewp-audit agents add",
				name, list[i].RevokedAt.UTC().Format("2006-01-02T15:04:05Z"))
		}
		return &list[i], nil
	}
	return nil, fmt.Errorf("agent %q is not in the register; add it with ewp-audit agents add %s (ewp-audit agents list shows them)", name, name)
}

// AgentsOf is the agent register a decision log keeps, looking through
// wrappers that have an Unwrap (audit/notify's); nil when it keeps none.
func AgentsOf(l audit.Log) audit.Agents {
	for l != nil {
		if a, ok := l.(audit.Agents); ok {
			return a
		}
		u, ok := l.(interface{ Unwrap() audit.Log })
		if !ok {
			return nil
		}
		l = u.Unwrap()
	}
	return nil
}
