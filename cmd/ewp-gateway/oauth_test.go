package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/oauthtest"
)

// ewp-gateway --jwks takes OAuth access tokens as ewp-mcp does: a good
// token is its sub with the groups of --groups-claim (so the config's call
// policy on group ops refuses an ops token and forwards a dev one); a
// token with another issuer, audience or key, or expired, is 401 without
// being echoed; an agent credential still works, and no credential is 401.
func TestHTTPOAuthTokens(t *testing.T) {
	bin, config, creds := policyWorld(t)
	is := oauthtest.New(t)
	const iss, aud = "https://auth.example", "https://gw.example/mcp"
	u := httpGateway(t, bin, config, "--jwks", is.JWKSFile(t, filepath.Dir(config)), "--issuer", iss, "--audience", aud,
		"--groups-claim", "groups")
	claims := func(sub string, edit func(map[string]any)) map[string]any {
		c := map[string]any{"iss": iss, "aud": aud, "sub": sub, "groups": []string{"dev"},
			"exp": time.Now().Add(10 * time.Minute).Unix(), "iat": time.Now().Unix()}
		if edit != nil {
			edit(c)
		}
		return c
	}
	text := func(body string) string {
		_, rest, _ := strings.Cut(body, `"text":"`)
		s, _, _ := strings.Cut(rest, `"`)
		return s
	}
	if code, body, _ := postCall(t, u, is.Sign(t, claims("alice", nil))); code != 200 || text(body) != "hi" {
		t.Errorf("alice's good token (group dev): %d %s, want the call forwarded", code, body)
	}
	ops := is.Sign(t, claims("olga", func(c map[string]any) { c["groups"] = []string{"ops"} }))
	if code, body, _ := postCall(t, u, ops); code != 200 || !strings.Contains(body, `call policy \"no_echo_for_ops\" forbids echo/echo for agent olga`) {
		t.Errorf("olga's good token (group ops): %d %s, want DENY by the call policy", code, body)
	}
	other := oauthtest.New(t)
	for name, tok := range map[string]string{
		"another issuer":   is.Sign(t, claims("alice", func(c map[string]any) { c["iss"] = "https://evil.example" })),
		"another audience": is.Sign(t, claims("alice", func(c map[string]any) { c["aud"] = "https://other.example/mcp" })),
		"another key":      other.Sign(t, claims("alice", nil)),
		"expired":          is.Sign(t, claims("alice", func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() })),
	} {
		code, body, challenge := postCall(t, u, tok)
		if code != 401 || !strings.Contains(challenge, "invalid_token") || strings.Contains(body+challenge, tok) {
			t.Errorf("%s: %d %q %s, want 401 invalid_token, the token not echoed", name, code, challenge, body)
		}
	}
	if code, body, _ := postCall(t, u, creds["dev"]); code != 200 || text(body) != "hi" {
		t.Errorf("an agent credential beside --jwks: %d %s", code, body)
	}
	if code, _, challenge := postCall(t, u, ""); code != 401 || !strings.Contains(challenge, "resource_metadata=") {
		t.Errorf("no credential with --jwks: %d %q, want 401 naming the metadata", code, challenge)
	}
	export := runProg(t, filepath.Join(bin, "ewp-audit"), "export", "--db", filepath.Join(filepath.Dir(config), "ewp.sqlite"))
	if !strings.Contains(export, `"agent":"alice"`) || !strings.Contains(export, `"agent":"olga"`) {
		t.Errorf("the tokens' decisions are not on record under their sub:\n%s", export)
	}
}
