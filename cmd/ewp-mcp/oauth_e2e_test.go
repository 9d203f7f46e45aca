package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	auditsqlite "github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/internal/oauthtest"
)

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// unsignedJWT is claims under the header {"alg":"none"} with an empty
// signature.
func unsignedJWT(claims map[string]any) string {
	body, _ := json.Marshal(claims)
	return b64url([]byte(`{"alg":"none","kid":"k1"}`)) + "." + b64url(body) + "."
}

// hmacJWT is the algorithm-confusion forgery: HS256 keyed with the
// public JWKS document.
func hmacJWT(claims map[string]any, key []byte) string {
	body, _ := json.Marshal(claims)
	in := b64url([]byte(`{"alg":"HS256","kid":"k1"}`)) + "." + b64url(body)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(in))
	return in + "." + b64url(m.Sum(nil))
}

// TestOAuthTokensAgainstTheServer: the real ewp-mcp with --jwks,
// --issuer, --audience and --groups-claim over HTTP. A JWT with a wrong
// issuer, a wrong audience, another key's signature, a swapped payload,
// alg none, HS256 keyed with the JWKS, or an expired exp is a 401 (the
// token never echoed); a good one is served, and its decision is in the
// SQLite log for the token's sub with its groups.
func TestOAuthTokensAgainstTheServer(t *testing.T) {
	const iss, aud = "https://auth.example", "https://ewp.example/mcp"
	is := oauthtest.New(t)
	jwksDoc := is.JWKS(t)
	jwksFile := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwksFile, jwksDoc, 0o600); err != nil {
		t.Fatal(err)
	}
	db := demoLedgerFile(t)
	p := startMCP(t, "--db", db, "--http", "127.0.0.1:0", "--jwks", jwksFile, "--issuer", iss, "--audience", aud, "--groups-claim", "groups")
	claims := func(k string, v any) map[string]any {
		c := map[string]any{"iss": iss, "aud": aud, "sub": "carol", "exp": time.Now().Add(time.Hour).Unix(), "groups": []string{"ops"}}
		c[k] = v
		return c
	}
	good := is.Sign(t, claims("sub", "carol"))
	parts := strings.Split(good, ".")
	swapped, _ := json.Marshal(claims("sub", "root"))
	for name, tok := range map[string]string{
		"wrong issuer":    is.Sign(t, claims("iss", "https://evil.example")),
		"wrong audience":  is.Sign(t, claims("aud", "https://other.example/mcp")),
		"other key":       oauthtest.New(t).Sign(t, claims("sub", "carol")),
		"payload swapped": parts[0] + "." + b64url(swapped) + "." + parts[2],
		"alg none":        unsignedJWT(claims("sub", "carol")),
		"alg HS256":       hmacJWT(claims("sub", "carol"), jwksDoc),
		"expired":         is.Sign(t, claims("exp", time.Now().Add(-time.Hour).Unix())),
	} {
		code, challenge, body := postBearer(t, p.url, tok)
		if code != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) || strings.Contains(body+challenge, tok) {
			t.Errorf("%s: %d %q %s", name, code, challenge, body)
		}
	}
	if code, _, body := postBearer(t, p.url, ""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d %s", code, body)
	}
	if strings.Contains(p.errb.String(), parts[2]) {
		t.Error("a token's signature is in the server's log")
	}

	r := callAs(t, p.url, good, "may_act", readCall)
	id, _ := r.out["decision_id"].(string)
	if r.out["decision"] != "MAY_ACT" || id == "" {
		t.Fatalf("a good token: %+v", r)
	}
	l, err := auditsqlite.Open(auditsqlite.DefaultPath(db), auditsqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	d, err := l.Decision(context.Background(), id)
	if err != nil || d.Agent != "carol" || !slices.Equal(d.AgentGroups, []string{"ops"}) || d.Caller.Credential != "oauth:carol" {
		t.Fatalf("the decision on record: %+v %v", d, err)
	}
	if all, err := l.List(context.Background(), audit.Filter{}); err != nil || len(all) != 1 {
		t.Fatalf("%d decisions on record, want only the good token's: %v", len(all), err)
	}
}

// postBearer sends a may_act with token as the bearer credential and
// returns the status, the WWW-Authenticate header and the body.
func postBearer(t *testing.T, url, token string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(callBody(1, "may_act", readCall)))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}
