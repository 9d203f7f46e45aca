package mcp

import (
	"context"
	"slices"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/identity"
)

// recordedAgent is the principal a decision is recorded for. An
// anonymous call records none, so its record is byte for byte what it
// was before agent identities (see history_golden_test.go).
func recordedAgent(ctx context.Context) (string, []string) {
	p := identity.PrincipalFrom(ctx)
	if p.Name == audit.Anonymous {
		return "", nil
	}
	return p.Name, slices.Clone(p.Groups)
}

// mayRead is whether ctx's caller may read decision d: an agent reads
// only the decisions recorded for it, so it never learns another agent's
// actions or picks up an approval meant for someone else. The ingest role
// (the operator's pipeline: the ingest token, or an agent added with
// --ingest) reads every decision. A decision recorded without an agent
// (before agent identities, or anonymous) is the anonymous caller's.
func mayRead(ctx context.Context, d *audit.Decision) bool {
	if hasIngest(ctx) {
		return true
	}
	owner := d.Agent
	if owner == "" {
		owner = audit.Anonymous
	}
	return owner == identity.PrincipalFrom(ctx).Name
}
