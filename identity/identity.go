// Package identity turns an HTTP request into the principal the gate
// judges for: an agent the operator created (its bearer credential is
// looked up on every request), the operator's ingest token (one kind of
// credential, carrying the ingest role), or an OAuth 2.1 access token (a
// JWT checked against a JWKS). It also serves the Protected Resource
// Metadata document (RFC 9728) and the 401 challenge that names it.
//
// Every entrance (ewp-mcp's /mcp, the gateway, the hook endpoints) asks
// the same Authenticator, so who is asking is decided in one place.
package identity

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// Bounds on what a caller sends; each has a test (bounds_test.go).
const (
	// MaxTokenBytes bounds a presented bearer token (an agent credential
	// is 53 bytes; an access token a few KiB). Longer: 401, unread.
	MaxTokenBytes = 8 << 10
	// MaxSubjectBytes bounds a JWT's sub, the principal's name.
	MaxSubjectBytes = 256
	// MaxGroups and MaxGroupBytes bound the groups claim: a token with
	// more groups, or a longer one, is refused rather than cut.
	MaxGroups     = 64
	MaxGroupBytes = 256
)

// Credential kinds, as the decision log names them (audit.Caller's
// Credential): which credential gave the caller its principal, never the
// secret itself.
const (
	CredentialNone        = "none"
	CredentialIngestToken = "ingest-token"
	CredentialAgent       = "agent"
	CredentialOAuth       = "oauth"
)

// DefaultIngestName is the principal of the ingest token unless the
// operator names another.
const DefaultIngestName = "ingest"

// Identity is what a request's credential established.
type Identity struct {
	Principal audit.Principal
	// Ingest: the credential carries the ingest role (the ingest token,
	// or an agent added with --ingest).
	Ingest bool
	// Credential is the kind that was accepted (Credential* constants).
	Credential string
	// Unmatched: a token was presented that is no credential of this
	// server, and the server takes anonymous callers, so the request is
	// served as anonymous, exactly as before agent identities existed.
	Unmatched bool
}

// Record is the credential's name for the decision log: the kind and,
// for an agent or an OAuth subject, the principal ("agent:NAME"), so
// idempotency keys, scoped by it, never cross principals.
func (id Identity) Record() string {
	switch id.Credential {
	case CredentialAgent, CredentialOAuth:
		return id.Credential + ":" + id.Principal.Name
	case "":
		return CredentialNone
	}
	return id.Credential
}

// Config configures an Authenticator. The zero value takes every caller
// as anonymous, as a server without credentials always did.
type Config struct {
	// Agents is the register of agent credentials (the decision log's);
	// nil: agent credentials are not accepted.
	Agents audit.Agents
	// IngestToken grants the ingest role to whoever presents it; "" none.
	IngestToken string
	// IngestName is the ingest token's principal (DefaultIngestName).
	IngestName string
	// OAuth accepts OAuth 2.1 access tokens; nil: none.
	OAuth *OAuth
	// Required refuses a request without a valid credential (401). It is
	// implied by OAuth: a client learns to fetch a token from the 401.
	Required bool
	// Resource is the protected resource's URL, e.g.
	// http://127.0.0.1:8765/mcp: the PRM document's resource, and where
	// the challenge says its metadata is.
	Resource string
	// Now is the clock tokens are checked against (time.Now).
	Now func() time.Time
}

// Authenticator authenticates requests; it is safe for concurrent use.
type Authenticator struct {
	agents     audit.Agents
	ingest     []byte // sha256 of the ingest token; nil: none
	ingestName string
	oauth      *verifier
	required   bool
	meta       metadata
}

// New checks cfg and, with OAuth, loads the JWKS once (a server whose
// keys cannot be read does not start).
func New(ctx context.Context, cfg Config) (*Authenticator, error) {
	a := &Authenticator{agents: cfg.Agents, ingestName: cfg.IngestName, required: cfg.Required || cfg.OAuth != nil}
	if a.ingestName == "" {
		a.ingestName = DefaultIngestName
	}
	if cfg.IngestToken != "" {
		sum := sha256.Sum256([]byte(cfg.IngestToken))
		a.ingest = sum[:]
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	if cfg.OAuth != nil {
		v, err := newVerifier(ctx, *cfg.OAuth, now)
		if err != nil {
			return nil, err
		}
		a.oauth = v
	}
	meta, err := newMetadata(cfg.Resource, cfg.OAuth)
	if err != nil {
		return nil, err
	}
	a.meta = meta
	return a, nil
}

// HasIngestToken is whether an ingest token is configured.
func (a *Authenticator) HasIngestToken() bool { return a.ingest != nil }

// Required is whether a request without a valid credential is refused.
func (a *Authenticator) Required() bool { return a.required }

// Error is a refused credential: Status 401 (missing or bad, answered
// with the challenge) or 503 (the register could not be read). Its text
// never holds the token.
type Error struct {
	Status int
	// Code is RFC 6750's error: "invalid_token", or "" for a request
	// that sent no credential.
	Code   string
	Reason string
}

func (e *Error) Error() string { return "identity: " + e.Reason }

func invalid(format string, a ...any) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Reason: fmt.Sprintf(format, a...)}
}

// Authenticate says who r is. A request without a credential is
// anonymous unless credentials are required; a credential that is
// presented and refused (an unknown or revoked agent credential, a JWT
// that does not verify) is always a 401: a caller that names itself is
// never quietly served as someone else.
func (a *Authenticator) Authenticate(r *http.Request) (Identity, error) {
	token, header, ok := presented(r)
	if !ok {
		if a.required {
			return Identity{}, &Error{Status: http.StatusUnauthorized,
				Reason: "this server needs a credential: send \"Authorization: Bearer <token>\""}
		}
		return a.anonymous(false), nil
	}
	if len(token) > MaxTokenBytes {
		return Identity{}, invalid("the bearer token is longer than %d bytes", MaxTokenBytes)
	}
	if a.isIngestToken(token) {
		return Identity{Principal: audit.Principal{Name: a.ingestName}, Ingest: true, Credential: CredentialIngestToken}, nil
	}
	if header == ingestHeader {
		return a.unmatched("the X-EWP-Ingest-Token sent does not match the server's ingest token")
	}
	switch {
	case a.agents != nil && strings.HasPrefix(token, AgentCredentialPrefix):
		return a.agent(r.Context(), token)
	case a.oauth != nil && looksLikeJWT(token):
		p, err := a.oauth.verify(r.Context(), token)
		if err != nil {
			return Identity{}, err
		}
		return Identity{Principal: p, Credential: CredentialOAuth}, nil
	}
	return a.unmatched("the bearer token is no credential of this server")
}

func (a *Authenticator) anonymous(unmatched bool) Identity {
	return Identity{Principal: audit.Principal{Name: audit.Anonymous}, Credential: CredentialNone, Unmatched: unmatched}
}

// unmatched serves a token that names nothing as anonymous where
// anonymous callers are served (the behaviour before agent identities:
// a wrong ingest token is evaluate-only), and refuses it otherwise.
func (a *Authenticator) unmatched(why string) (Identity, error) {
	if a.required {
		return Identity{}, invalid("%s", why)
	}
	return a.anonymous(true), nil
}

// isIngestToken compares digests in constant time, so neither the
// token's content nor its length leaks.
func (a *Authenticator) isIngestToken(token string) bool {
	if a.ingest == nil {
		return false
	}
	sum := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(sum[:], a.ingest) == 1
}

// agent looks the credential up in the register, every time: a
// revocation takes effect on the next request.
func (a *Authenticator) agent(ctx context.Context, token string) (Identity, error) {
	if !IsAgentCredential(token) {
		return Identity{}, invalid("the agent credential is malformed: want %s and %d base64url characters", AgentCredentialPrefix, agentSecretChars)
	}
	sum := audit.CredentialSHA256(token)
	rec, err := a.agents.AgentByCredential(ctx, sum)
	if errors.Is(err, audit.ErrNotFound) {
		return Identity{}, invalid("the agent credential is unknown or revoked")
	}
	if err != nil {
		return Identity{}, &Error{Status: http.StatusServiceUnavailable, Reason: "the agent register could not be read: " + err.Error()}
	}
	// The store found the row by its hash; comparing again in constant
	// time guards against a store that answers the wrong one.
	if subtle.ConstantTimeCompare([]byte(rec.CredentialSHA256), []byte(sum)) != 1 || !rec.RevokedAt.IsZero() {
		return Identity{}, invalid("the agent credential is unknown or revoked")
	}
	return Identity{Principal: rec.Principal(), Ingest: rec.Ingest, Credential: CredentialAgent}, nil
}

// ingestHeader is the older header the ingest token may come in.
const ingestHeader = "X-EWP-Ingest-Token"

// ingestHeaderKey is ingestHeader as net/http keeps header names
// (canonical): Header.Get of the name as written canonicalises it anew,
// an allocation on every request.
var ingestHeaderKey = textproto.CanonicalMIMEHeaderKey(ingestHeader)

// presented is the token r carries: X-EWP-Ingest-Token, or a Bearer
// Authorization (any other scheme is no credential).
func presented(r *http.Request) (token, header string, ok bool) {
	if v := r.Header[ingestHeaderKey]; len(v) > 0 && v[0] != "" {
		return v[0], ingestHeader, true
	}
	scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if ok && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(t) != "" {
		return strings.TrimSpace(t), "Authorization", true
	}
	return "", "", false
}

// looksLikeJWT: a JWS in compact form has three dot-separated parts.
func looksLikeJWT(token string) bool { return strings.Count(token, ".") == 2 }

type principalKey struct{}

// WithPrincipal is ctx carrying p, the principal its call is judged for.
// Only an entrance sets it, after authenticating.
func WithPrincipal(ctx context.Context, p audit.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom is ctx's principal; Anonymous when no entrance set one.
func PrincipalFrom(ctx context.Context) audit.Principal {
	if p, ok := ctx.Value(principalKey{}).(audit.Principal); ok && p.Name != "" {
		return p
	}
	return audit.Principal{Name: audit.Anonymous}
}

type identityKey struct{}

// IdentityFrom is what Wrap established for ctx's request: the
// credential's kind, its record name and the ingest role, beside the
// principal PrincipalFrom gives.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// Wrap is the Authenticator in front of next, for an entrance with no
// front of its own (the gateway, the hook endpoints): it serves the PRM
// document at its paths, answers a refused credential with Challenge, and
// hands next the request with the principal (WithPrincipal) and the
// Identity (IdentityFrom) on its context. Host and Origin are the
// caller's to check first.
func (a *Authenticator) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.IsMetadataPath(r.URL.Path) {
			a.ServeMetadata(w, r)
			return
		}
		id, err := a.Authenticate(r)
		if err != nil {
			a.Challenge(w, err)
			return
		}
		ctx := context.WithValue(WithPrincipal(r.Context(), id.Principal), identityKey{}, id)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
