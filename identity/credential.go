package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ewp-go/ewp/audit"
)

// AgentCredentialPrefix starts every agent credential, so a leaked one is
// recognisable (by a secret scanner, or a person) for what it is.
const AgentCredentialPrefix = "ewp_agent_"

// agentSecretChars is the length of the credential's random part: 32
// bytes, base64url without padding.
const agentSecretChars = 43

// NewAgentCredential makes a credential: AgentCredentialPrefix and 32
// random bytes in base64url. It is shown once; only CredentialSHA256 of
// it is stored.
func NewAgentCredential() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("identity: no credential could be made (the system's random source failed): %w", err)
	}
	return AgentCredentialPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// IsAgentCredential is whether s has the shape of an agent credential.
func IsAgentCredential(s string) bool {
	rest, ok := strings.CutPrefix(s, AgentCredentialPrefix)
	if !ok || len(rest) != agentSecretChars {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(rest)
	return err == nil && len(b) == 32
}

// CredentialSHA256 is what the register stores of a credential: the
// lower-case hex sha256 of the whole string.
func CredentialSHA256(credential string) string {
	sum := sha256.Sum256([]byte(credential))
	return hex.EncodeToString(sum[:])
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
