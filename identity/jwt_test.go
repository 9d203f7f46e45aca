package identity

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

func TestGoodJWTGivesThePrincipalWithGroups(t *testing.T) {
	is := newIssuer(t)
	a := newAuth(t, Config{OAuth: is.oauth(is.file())})
	for kid := range is.keys {
		id, err := a.Authenticate(bearer(is.sign(kid, kid, goodClaims())))
		if err != nil {
			t.Fatalf("%s: %v", kid, err)
		}
		if id.Principal.Name != "alice" || !slices.Equal(id.Principal.Groups, []string{"ops", "db"}) ||
			id.Ingest || id.Credential != CredentialOAuth || id.Record() != "oauth:alice" {
			t.Fatalf("%s: %+v", kid, id)
		}
	}
	c := goodClaims()
	c["groups"], c["aud"] = "ops", testAudience // one string each
	if id, err := a.Authenticate(bearer(is.sign("ec-1", "ec-1", c))); err != nil || !slices.Equal(id.Principal.Groups, []string{"ops"}) {
		t.Fatalf("%+v %v", id, err)
	}
	delete(c, "groups")
	if id, err := a.Authenticate(bearer(is.sign("ec-1", "ec-1", c))); err != nil || id.Principal.Groups != nil {
		t.Fatalf("no groups claim: %+v %v", id, err)
	}
}

func TestOAuthRequiresACredential(t *testing.T) {
	is := newIssuer(t)
	a := newAuth(t, Config{OAuth: is.oauth(is.file())})
	mustRefuse(t, a, bearer(""), "needs a credential")
	mustRefuse(t, a, bearer("not-a-jwt"), "no credential of this server")
}

func TestBadJWTsAreRefused(t *testing.T) {
	is := newIssuer(t)
	a := newAuth(t, Config{OAuth: is.oauth(is.file())})
	with := func(k string, v any) string {
		c := goodClaims()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return is.sign("rsa-1", "rsa-1", c)
	}
	other := newIssuer(t) // same kids, other keys: a forged signature
	good := is.sign("ed-1", "ed-1", goodClaims())
	parts := strings.Split(good, ".")
	cases := map[string]struct{ token, want string }{
		"wrong issuer":       {with("iss", "https://evil.example"), "iss is not"},
		"issuer prefix":      {with("iss", testIssuer+"/"), "iss is not"},
		"wrong audience":     {with("aud", []string{"http://other/mcp"}), "aud does not name"},
		"no audience":        {with("aud", nil), "aud does not name"},
		"expired":            {with("exp", testNow.Add(-Leeway-time.Second).Unix()), "expired"},
		"no exp":             {with("exp", nil), "no exp"},
		"not yet valid":      {with("nbf", testNow.Add(Leeway+time.Minute).Unix()), "not valid yet"},
		"no sub":             {with("sub", nil), "sub is empty"},
		"sub anonymous":      {with("sub", audit.Anonymous), "principal of calls no credential names"},
		"forged signature":   {other.sign("rsa-1", "rsa-1", goodClaims()), "does not verify"},
		"payload swapped":    {parts[0] + "." + b64(`{"sub":"root","iss":"`+testIssuer+`"}`) + "." + parts[2], "does not verify"},
		"unknown kid":        {is.sign("rsa-1", "rsa-9", goodClaims()), "no key in the JWKS"},
		"kid of another alg": {is.sign("rsa-1", "ec-1", goodClaims()), "no key in the JWKS"},
		"alg none":           {unsigned("none", goodClaims()), "allowed algorithm"},
		"alg HS256":          {hs256(goodClaims(), is.jwks()), "allowed algorithm"},
		"alg RS512":          {unsigned("RS512", goodClaims()), "allowed algorithm"},
		"two dots, garbage":  {"a.b.c", "allowed algorithm"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := mustRefuse(t, a, bearer(tc.token), tc.want)
			if e.Code != "invalid_token" || strings.Contains(e.Error(), tc.token) {
				t.Fatalf("%+v", e)
			}
		})
	}
	// Within the leeway, exp and nbf still pass.
	if _, err := a.Authenticate(bearer(with("exp", testNow.Add(-Leeway+time.Second).Unix()))); err != nil {
		t.Fatalf("exp within the leeway: %v", err)
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// unsigned is a token with the given alg header and an empty signature.
func unsigned(alg string, claims map[string]any) string {
	body, _ := json.Marshal(claims)
	return b64(`{"alg":"`+alg+`","kid":"rsa-1"}`) + "." + b64(string(body)) + "."
}

// hs256 is the classic confusion attack: HMAC keyed with the public JWKS.
func hs256(claims map[string]any, key []byte) string {
	body, _ := json.Marshal(claims)
	in := b64(`{"alg":"HS256","kid":"rsa-1"}`) + "." + b64(string(body))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(in))
	return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func TestNoKidNeedsASingleKey(t *testing.T) {
	is := newIssuer(t)
	a := newAuth(t, Config{OAuth: is.oauth(is.file())})
	// One key per algorithm: without a kid the only ES256 key is used.
	if _, err := a.Authenticate(bearer(is.sign("ec-1", "", goodClaims()))); err != nil {
		t.Fatalf("%v", err)
	}
	two := newIssuer(t)
	two.keys["rsa-2"], two.algs["rsa-2"] = two.keys["rsa-1"], two.algs["rsa-1"]
	b := newAuth(t, Config{OAuth: two.oauth(two.file())})
	mustRefuse(t, b, bearer(two.sign("rsa-1", "", goodClaims())), "no key in the JWKS")
}

func TestSubjectAndGroupBounds(t *testing.T) {
	is := newIssuer(t)
	a := newAuth(t, Config{OAuth: is.oauth(is.file())})
	signed := func(k string, v any) *http.Request {
		c := goodClaims()
		c[k] = v
		return bearer(is.sign("ed-1", "ed-1", c))
	}
	if _, err := a.Authenticate(signed("sub", strings.Repeat("s", MaxSubjectBytes))); err != nil {
		t.Fatalf("sub at the bound: %v", err)
	}
	mustRefuse(t, a, signed("sub", strings.Repeat("s", MaxSubjectBytes+1)), "longer than")
	mustRefuse(t, a, signed("sub", "al\u202eice"), "control characters")
	mustRefuse(t, a, signed("sub", "al\nice"), "control characters")
	many := make([]string, MaxGroups+1)
	for i := range many {
		many[i] = fmt.Sprint("g", i)
	}
	if _, err := a.Authenticate(signed("groups", many[:MaxGroups])); err != nil {
		t.Fatalf("groups at the bound: %v", err)
	}
	mustRefuse(t, a, signed("groups", many), "more than")
	mustRefuse(t, a, signed("groups", []string{strings.Repeat("g", MaxGroupBytes+1)}), "longer than")
	mustRefuse(t, a, signed("groups", []string{""}), "empty")
	mustRefuse(t, a, signed("groups", []any{1, 2}), "neither a string nor an array")
	if _, err := a.Authenticate(signed("groups", []string{strings.Repeat("g", MaxGroupBytes)})); err != nil {
		t.Fatalf("a group at the bound: %v", err)
	}
}

// jwksServer serves is's JWKS and counts fetches.
func jwksServer(t *testing.T, body func() []byte) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = w.Write(body())
	}))
	t.Cleanup(ts.Close)
	return ts, &n
}

func TestJWKSURLRefreshedOnUnknownKid(t *testing.T) {
	is := newIssuer(t)
	rotated := newIssuer(t)
	var serve atomic.Pointer[[]byte]
	first := is.jwks()
	serve.Store(&first)
	ts, fetches := jwksServer(t, func() []byte { return *serve.Load() })
	now := testNow
	a := newAuth(t, Config{OAuth: is.oauth(ts.URL + "/jwks"), Now: func() time.Time { return now }})
	if _, err := a.Authenticate(bearer(is.sign("rsa-1", "rsa-1", goodClaims()))); err != nil || fetches.Load() != 1 {
		t.Fatalf("%v, %d fetches", err, fetches.Load())
	}
	// The issuer rotates to new keys under a new kid.
	rotated.keys["rsa-2"], rotated.algs["rsa-2"] = rotated.keys["rsa-1"], rotated.algs["rsa-1"]
	delete(rotated.keys, "rsa-1")
	next := rotated.jwks()
	serve.Store(&next)
	tok := rotated.sign("rsa-2", "rsa-2", goodClaims())
	// Within the refresh interval of the first load, no fetch is made.
	mustRefuse(t, a, bearer(tok), "no key in the JWKS")
	if fetches.Load() != 1 {
		t.Fatalf("%d fetches: an unknown kid may not force a fetch within %v", fetches.Load(), JWKSRefreshInterval)
	}
	now = now.Add(JWKSRefreshInterval + time.Second)
	if id, err := a.Authenticate(bearer(tok)); err != nil || id.Principal.Name != "alice" {
		t.Fatalf("after rotation: %+v %v", id, err)
	}
	// A flood of unknown kids costs at most one fetch per interval.
	for i := 0; i < 20; i++ {
		_, _ = a.Authenticate(bearer(rotated.sign("rsa-2", fmt.Sprint("nope-", i), goodClaims())))
	}
	if fetches.Load() != 2 {
		t.Fatalf("%d fetches after a flood of unknown kids", fetches.Load())
	}
	// An old set is reloaded; if that fails the keys it had still verify.
	now = now.Add(JWKSMaxAge + time.Second)
	ts.Close()
	late := goodClaims()
	late["exp"] = now.Add(time.Hour).Unix()
	if _, err := a.Authenticate(bearer(rotated.sign("rsa-2", "rsa-2", late))); err != nil {
		t.Fatalf("a failed reload must keep the keys: %v", err)
	}
}

func TestJWKSBounds(t *testing.T) {
	is := newIssuer(t)
	big := append(is.jwks()[:len(is.jwks())-1], []byte(`,"pad":"`+strings.Repeat("x", MaxJWKSBytes)+`"}`)...)
	ts, _ := jwksServer(t, func() []byte { return big })
	ctx := context.Background()
	if _, err := New(ctx, Config{OAuth: is.oauth(ts.URL)}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a JWKS over %d bytes: %v", MaxJWKSBytes, err)
	}
	p := is.t.TempDir() + "/big.json"
	_ = os.WriteFile(p, big, 0o600)
	if _, err := New(ctx, Config{OAuth: is.oauth(p)}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a JWKS file over the bound: %v", err)
	}
	var keys []json.RawMessage
	var set struct{ Keys []json.RawMessage }
	_ = json.Unmarshal(is.jwks(), &set)
	for len(keys) <= MaxJWKSKeys {
		keys = append(keys, set.Keys[0])
	}
	many, _ := json.Marshal(map[string]any{"keys": keys})
	ts2, _ := jwksServer(t, func() []byte { return many })
	if _, err := New(ctx, Config{OAuth: is.oauth(ts2.URL)}); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("more than %d keys: %v", MaxJWKSKeys, err)
	}
	if _, err := parseJWKS(many[:0], "x"); err == nil {
		t.Fatal("an empty document parses")
	}
	sym, _ := json.Marshal(map[string]any{"keys": []any{map[string]string{"kty": "oct", "k": b64("secret"), "kid": "h"}}})
	if _, err := parseJWKS(sym, "x"); err == nil || !strings.Contains(err.Error(), "no usable public signing key") {
		t.Fatalf("a symmetric key is not a verification key: %v", err)
	}
}

func TestJWKSErrorsHideSecrets(t *testing.T) {
	is := newIssuer(t)
	ts := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(ts.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	for _, base := range []string{ts.URL, closedURL} {
		u := strings.Replace(base, "http://", "http://user:hunter2@", 1) + "/jwks?access_token=s3cret#frag"
		_, err := New(context.Background(), Config{OAuth: is.oauth(u)})
		if err == nil {
			t.Fatalf("%s: no error", base)
		}
		for _, secret := range []string{"hunter2", "user:", "s3cret", "access_token", "frag"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows %q: %v", secret, err)
			}
		}
		if !strings.Contains(err.Error(), "/jwks") {
			t.Errorf("the error should name the JWKS: %v", err)
		}
	}
}

func TestOAuthConfigIsChecked(t *testing.T) {
	ctx := context.Background()
	for _, o := range []OAuth{{Issuer: "i", Audience: "a"}, {JWKS: "f", Audience: "a"}, {JWKS: "f", Issuer: "i"}, {JWKS: "https:///x", Issuer: "i", Audience: "a"}} {
		if _, err := New(ctx, Config{OAuth: &o}); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

func TestAnonymousPrincipalName(t *testing.T) {
	if audit.Anonymous != "anonymous" {
		t.Fatal("the anonymous principal's name is part of the contract")
	}
}

func TestJWKSFetchTimeout(t *testing.T) {
	is := newIssuer(t)
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		_, _ = w.Write([]byte(`{"keys":[`)) // then hangs mid-body
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	defer close(release)
	o := is.oauth(ts.URL + "/jwks")
	o.FetchTimeout = 200 * time.Millisecond
	start := time.Now()
	_, err := New(context.Background(), Config{OAuth: o})
	if err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Fatalf("a JWKS that never ends: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the fetch took %v past its 200ms bound", d)
	}
}
