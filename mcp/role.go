package mcp

import (
	"context"
	"fmt"

	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/warrant"
)

// role is what the transport established about the caller. Only the
// transport sets it (stdio: the operator's --allow-ingest; HTTP: a
// credential carrying the role: the ingest token, or an agent the
// operator added with --ingest), so an agent can never grant itself the
// ingest role.
type role struct {
	ingest bool
	// why says, when ingest is false, what the caller would need; it
	// becomes the refusal message so the fix is obvious.
	why string
}

type roleKey struct{}

func withRole(ctx context.Context, r role) context.Context {
	return context.WithValue(ctx, roleKey{}, r)
}

// roleFrom returns the caller's role; a context without one (an in-process
// client) is evaluate-only.
func roleFrom(ctx context.Context) role {
	if r, ok := ctx.Value(roleKey{}).(role); ok {
		return r
	}
	return role{why: "no transport granted this caller the ingest role"}
}

func hasIngest(ctx context.Context) bool { return roleFrom(ctx).ingest }

// requireIngest refuses a write by a caller without the ingest role.
func requireIngest(ctx context.Context) error {
	r := roleFrom(ctx)
	if r.ingest {
		return nil
	}
	return refuse(warrant.CodeIngestRole, "",
		"this tool writes to the ledger and needs the ingest role: %s. "+
			"Agents evaluate; writes belong to the ingest pipeline", r.why)
}

// Reasons a transport gives for withholding the role.
const (
	whyStdioReadOnly = "the server was started without --allow-ingest, so it is evaluate-only"
	whyHTTPNoToken   = "the server was started without an ingest token (EWP_INGEST_TOKEN or --ingest-token-file), so it is evaluate-only over HTTP"
	whyNoCredential  = "send the ingest token as \"Authorization: Bearer <token>\" or \"X-EWP-Ingest-Token: <token>\""
	whyBadCredential = "the ingest token sent with this request does not match the server's"
)

// roleOf is the role an HTTP request's credential carries. HTTP writes
// are on only where the operator gave the server an ingest token (the
// ledger is opened writable then); an agent added with --ingest writes
// there too.
func (f *httpFront) roleOf(id identity.Identity) role {
	switch {
	case !f.auth.HasIngestToken():
		return role{why: whyHTTPNoToken}
	case id.Ingest:
		return role{ingest: true}
	case id.Unmatched:
		return role{why: whyBadCredential}
	case id.Credential == credentialNone:
		return role{why: whyNoCredential}
	}
	return role{why: fmt.Sprintf("the credential of %q does not carry the ingest role "+
		"(the ingest token does; ewp-audit agents add --ingest gives an agent one)", id.Principal.Name)}
}
