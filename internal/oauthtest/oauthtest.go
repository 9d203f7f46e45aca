// Package oauthtest is a test authorization server's signing side: one
// ES256 key under kid "k1", its JWKS document, and access tokens signed
// with it, for the tests that present OAuth tokens to ewp-mcp and
// ewp-gateway.
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// KeyID is the kid every Issuer signs under.
const KeyID = "k1"

// Issuer signs access tokens with a key of its own.
type Issuer struct{ key *ecdsa.PrivateKey }

// New is an Issuer with a fresh key: two Issuers sign under the same kid
// with different keys, so one's tokens are forgeries to the other's JWKS.
func New(t testing.TB) *Issuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &Issuer{k}
}

// JWKS is the issuer's public key set, as its JWKS document.
func (is *Issuer) JWKS(t testing.TB) []byte {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: is.key.Public(), KeyID: KeyID, Use: "sig", Algorithm: "ES256"}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// JWKSFile writes the JWKS document to dir/jwks.json and returns its path.
func (is *Issuer) JWKSFile(t testing.TB, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(p, is.JWKS(t), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Sign is claims as a compact JWS signed ES256 under KeyID.
func (is *Issuer) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: is.key}, (&jose.SignerOptions{}).WithHeader("kid", KeyID))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
