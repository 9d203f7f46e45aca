package identity

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/ewp-go/ewp/audit"
)

// fakeAgents is an in-memory register that counts its lookups.
type fakeAgents struct {
	mu      sync.Mutex
	byHash  map[string]*audit.AgentRecord
	lookups int
	err     error
}

func newFakeAgents() *fakeAgents { return &fakeAgents{byHash: map[string]*audit.AgentRecord{}} }

func (f *fakeAgents) add(t *testing.T, name string, ingest bool, groups ...string) string {
	t.Helper()
	cred, _, err := audit.NewAgentCredential()
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.byHash[audit.CredentialSHA256(cred)] = &audit.AgentRecord{Name: name, Groups: groups, Ingest: ingest,
		CredentialSHA256: audit.CredentialSHA256(cred), CreatedAt: time.Unix(1, 0)}
	return cred
}

func (f *fakeAgents) AddAgent(context.Context, *audit.AgentRecord) error { return nil }

func (f *fakeAgents) ListAgents(context.Context) ([]audit.AgentRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []audit.AgentRecord
	for _, r := range f.byHash {
		out = append(out, *r)
	}
	return out, nil
}

func (f *fakeAgents) RevokeAgent(_ context.Context, name string, at time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.byHash {
		if r.Name == name {
			r.RevokedAt = at
			return nil
		}
	}
	return audit.ErrNotFound
}

func (f *fakeAgents) AgentByCredential(_ context.Context, sum string) (*audit.AgentRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if f.err != nil {
		return nil, f.err
	}
	r, ok := f.byHash[sum]
	if !ok || !r.RevokedAt.IsZero() {
		return nil, audit.ErrNotFound
	}
	c := *r
	return &c, nil
}

// issuer is a test authorization server: keys and a JWKS.
type issuer struct {
	t    *testing.T
	keys map[string]crypto.Signer // by kid
	algs map[string]jose.SignatureAlgorithm
}

const (
	testIssuer   = "https://auth.example"
	testAudience = "http://127.0.0.1:8765/mcp"
)

var testNow = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{t: t, keys: map[string]crypto.Signer{}, algs: map[string]jose.SignatureAlgorithm{}}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is.keys["rsa-1"], is.algs["rsa-1"] = rk, jose.RS256
	is.keys["ec-1"], is.algs["ec-1"] = ek, jose.ES256
	is.keys["ed-1"], is.algs["ed-1"] = ed, jose.EdDSA
	return is
}

// jwks is the public key set as JSON.
func (is *issuer) jwks() []byte {
	is.t.Helper()
	var set jose.JSONWebKeySet
	for kid, k := range is.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Public(), KeyID: kid, Use: "sig", Algorithm: string(is.algs[kid])})
	}
	b, err := json.Marshal(set)
	if err != nil {
		is.t.Fatal(err)
	}
	return b
}

// file writes the JWKS to a file and returns its path.
func (is *issuer) file() string {
	p := filepath.Join(is.t.TempDir(), "jwks.json")
	if err := os.WriteFile(p, is.jwks(), 0o600); err != nil {
		is.t.Fatal(err)
	}
	return p
}

// goodClaims are valid claims at testNow.
func goodClaims() map[string]any {
	return map[string]any{"iss": testIssuer, "aud": []string{testAudience}, "sub": "alice",
		"exp": testNow.Add(time.Hour).Unix(), "nbf": testNow.Add(-time.Minute).Unix(), "groups": []string{"ops", "db"}}
}

// sign signs claims with the key kid (the header names headerKid).
func (is *issuer) sign(kid, headerKid string, claims map[string]any) string {
	is.t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if headerKid != "" {
		opts = opts.WithHeader("kid", headerKid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: is.algs[kid], Key: is.keys[kid]}, opts)
	if err != nil {
		is.t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		is.t.Fatal(err)
	}
	return tok
}

func (is *issuer) oauth(jwks string) *OAuth {
	return &OAuth{JWKS: jwks, Issuer: testIssuer, Audience: testAudience, GroupsClaim: "groups"}
}

func newAuth(t *testing.T, cfg Config) *Authenticator {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return testNow }
	}
	if cfg.Resource == "" {
		cfg.Resource = testAudience
	}
	a, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func bearer(token string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

// mustRefuse wants a 401 whose reason mentions want.
func mustRefuse(t *testing.T, a *Authenticator, r *http.Request, want string) *Error {
	t.Helper()
	id, err := a.Authenticate(r)
	e, ok := err.(*Error)
	if !ok || e.Status != http.StatusUnauthorized {
		t.Fatalf("want a 401, got identity %+v, error %v", id, err)
	}
	if !containsFold(e.Reason, want) {
		t.Fatalf("reason %q should mention %q", e.Reason, want)
	}
	return e
}
