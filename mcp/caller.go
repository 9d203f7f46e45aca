package mcp

import (
	"context"

	"github.com/mark3labs/mcp-go/server"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/identity"
)

// Transports as the decision log names them.
const (
	transportStdio     = "stdio"
	transportHTTP      = "http"
	transportInProcess = "inprocess"
)

// credentialNone is the decision log's credential of a caller none
// named. Idempotency keys are scoped by the credential's name.
const credentialNone = identity.CredentialNone

// transportInfo is what the transport knows about the connection.
type transportInfo struct {
	name   string
	remote string // the peer's address; "" over stdio
	// credential is the credential's name for the record (identity's
	// Identity.Record: "agent:NAME", "oauth:SUB", "ingest-token"); ""
	// when the transport established none.
	credential string
}

type transportKey struct{}

// withCaller records which transport serves ctx's call, the credential
// that named the caller, and the principal it named
// (identity.WithPrincipal). Only the transports set it, next to the role.
func withCaller(ctx context.Context, tr transportInfo, p audit.Principal) context.Context {
	ctx = context.WithValue(ctx, transportKey{}, tr)
	if anonymous(p) && anonymous(identity.PrincipalFrom(ctx)) {
		// PrincipalFrom answers the same without it: one allocation
		// less on nearly every HTTP request.
		return ctx
	}
	return identity.WithPrincipal(ctx, p)
}

// anonymous is the principal PrincipalFrom gives when none was set.
func anonymous(p audit.Principal) bool { return p.Name == audit.Anonymous && len(p.Groups) == 0 }

// callerFrom is the caller of ctx as the decision log records it: the
// transport, the peer, the role and the credential that gave it, and the
// client's own name and version from initialize when the session kept
// them (the stateless HTTP transport has no session, so it has none).
func callerFrom(ctx context.Context) audit.Caller {
	tr, ok := ctx.Value(transportKey{}).(transportInfo)
	if !ok {
		tr.name = transportInProcess
	}
	c := audit.Caller{Transport: tr.name, RemoteAddr: tr.remote, Role: "evaluate", Credential: credentialNone}
	if tr.credential != "" {
		c.Credential = tr.credential
	}
	if hasIngest(ctx) {
		c.Role = "ingest"
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		info := s.GetClientInfo()
		c.ClientName, c.ClientVersion = info.Name, info.Version
	}
	return c
}

// callContext is the context an HTTP request is served on: its
// transport, the credential and principal id established, and the role.
func (f *httpFront) callContext(ctx context.Context, remote string, id identity.Identity) context.Context {
	tr := transportInfo{name: transportHTTP, remote: remote}
	if id.Credential != credentialNone {
		tr.credential = id.Record()
	}
	return withRole(withCaller(ctx, tr, id.Principal), f.roleOf(id))
}
