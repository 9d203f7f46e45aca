package mcp

import (
	"context"

	"github.com/mark3labs/mcp-go/server"

	"github.com/ewp-go/ewp/audit"
)

// Transports as the decision log names them.
const (
	transportStdio     = "stdio"
	transportHTTP      = "http"
	transportInProcess = "inprocess"
)

// Credential names in the decision log: which credential gave the caller
// its role, never the secret itself. Idempotency keys are scoped by it.
const (
	credentialIngestToken = "ingest-token"
	credentialNone        = "none"
)

// transportInfo is what the transport knows about the connection.
type transportInfo struct {
	name   string
	remote string // the peer's address; "" over stdio
}

type transportKey struct{}

// withTransport records which transport serves ctx's call. Only the
// transports set it, next to the role.
func withTransport(ctx context.Context, name, remote string) context.Context {
	return context.WithValue(ctx, transportKey{}, transportInfo{name: name, remote: remote})
}

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
	if hasIngest(ctx) {
		c.Role = "ingest"
		if tr.name == transportHTTP {
			c.Credential = credentialIngestToken // over stdio the role is the operator's flag, not a credential
		}
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		info := s.GetClientInfo()
		c.ClientName, c.ClientVersion = info.Name, info.Version
	}
	return c
}
