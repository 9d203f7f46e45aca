package mcp

import (
	"context"
	"slices"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/identity"
)

// requestAgent is the principal the gate judges ctx's call for
// (gate.Request.Agent). An anonymous call carries none, so the gate
// records none and its record is byte for byte what it was before agent
// identities (history_golden_test.go); the gate still judges it as
// audit.Anonymous.
func requestAgent(ctx context.Context) audit.Principal {
	p := identity.PrincipalFrom(ctx)
	if p.Name == audit.Anonymous {
		return audit.Principal{}
	}
	return audit.Principal{Name: p.Name, Groups: slices.Clone(p.Groups)}
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
