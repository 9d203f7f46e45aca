package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/ewp-go/ewp/audit"
)

// Leeway is the clock skew allowed on exp and nbf.
const Leeway = 30 * time.Second

// OAuth configures OAuth 2.1 access tokens (the MCP authorization spec):
// JWTs an authorization server signed, checked against its JWKS.
type OAuth struct {
	// JWKS is a file path or an http(s) URL of the issuer's key set.
	JWKS string
	// Issuer and Audience must equal the token's iss and one of its aud.
	Issuer, Audience string
	// GroupsClaim names the claim holding the subject's groups (a JSON
	// array of strings, or one string); "" takes no groups.
	GroupsClaim string
	// Client fetches a JWKS URL (nil: http.Client's defaults; it never
	// follows a redirect).
	Client *http.Client
	// FetchTimeout bounds one fetch of a JWKS URL, the body read too
	// (0: JWKSFetchTimeout).
	FetchTimeout time.Duration
}

type verifier struct {
	keys                  *keySet
	issuer, audience, grp string
	now                   func() time.Time
}

func newVerifier(ctx context.Context, o OAuth, now func() time.Time) (*verifier, error) {
	switch {
	case o.JWKS == "":
		return nil, errors.New("identity: OAuth needs a JWKS (--jwks FILE|URL)")
	case o.Issuer == "":
		return nil, errors.New("identity: OAuth needs the issuer the tokens must name (--issuer)")
	case o.Audience == "":
		return nil, errors.New("identity: OAuth needs the audience the tokens must name (--audience), this server's resource URL")
	}
	ks, err := newKeySet(o.JWKS, o.Client, o.FetchTimeout, now)
	if err != nil {
		return nil, err
	}
	keys, err := ks.load(ctx)
	if err != nil {
		return nil, err
	}
	ks.keys, ks.loaded, ks.lastTry = keys, now(), now()
	return &verifier{keys: ks, issuer: o.Issuer, audience: o.Audience, grp: o.GroupsClaim, now: now}, nil
}

// verify checks an access token: an allowed algorithm, a key of the set,
// the signature, exactly the issuer, the audience, exp (required) and
// nbf with Leeway, and a bounded sub and groups.
func (v *verifier) verify(ctx context.Context, raw string) (audit.Principal, error) {
	tok, err := jwt.ParseSigned(raw, allowedAlgs)
	if err != nil {
		return audit.Principal{}, invalid("the access token is not a JWT signed with an allowed algorithm (RS256, ES256, EdDSA)")
	}
	if len(tok.Headers) != 1 {
		return audit.Principal{}, invalid("the access token must carry exactly one signature")
	}
	h := tok.Headers[0]
	key, err := v.keys.key(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return audit.Principal{}, err
	}
	var claims jwt.Claims
	var extra map[string]json.RawMessage
	if err := tok.Claims(key.Key, &claims, &extra); err != nil {
		return audit.Principal{}, invalid("the access token's signature does not verify with the JWKS key %q", clip(key.KeyID))
	}
	if claims.Expiry == nil {
		return audit.Principal{}, invalid("the access token has no exp")
	}
	err = claims.ValidateWithLeeway(jwt.Expected{Issuer: v.issuer, AnyAudience: jwt.Audience{v.audience}, Time: v.now()}, Leeway)
	if err != nil {
		return audit.Principal{}, invalid("%s", v.claimsError(err))
	}
	if err := checkName("sub", claims.Subject, MaxSubjectBytes); err != nil {
		return audit.Principal{}, err
	}
	if claims.Subject == audit.Anonymous {
		return audit.Principal{}, invalid("the access token's sub is %q, the principal of calls no credential names", audit.Anonymous)
	}
	groups, err := v.groups(extra)
	if err != nil {
		return audit.Principal{}, err
	}
	return audit.Principal{Name: claims.Subject, Groups: groups}, nil
}

// claimsError says which claim failed, never echoing the token's values
// beyond what the operator configured.
func (v *verifier) claimsError(err error) string {
	switch {
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return fmt.Sprintf("the access token's iss is not %q", v.issuer)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return fmt.Sprintf("the access token's aud does not name %q", v.audience)
	case errors.Is(err, jwt.ErrExpired):
		return "the access token has expired (exp)"
	case errors.Is(err, jwt.ErrNotValidYet):
		return "the access token is not valid yet (nbf)"
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return "the access token was issued in the future (iat)"
	}
	return "the access token's claims are not valid"
}

// groups reads the named claim: an array of strings or one string.
func (v *verifier) groups(extra map[string]json.RawMessage) ([]string, error) {
	raw, ok := extra[v.grp]
	if v.grp == "" || !ok || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		var one string
		if json.Unmarshal(raw, &one) != nil {
			return nil, invalid("the access token's %q claim is neither a string nor an array of strings", clip(v.grp))
		}
		list = []string{one}
	}
	if len(list) > MaxGroups {
		return nil, invalid("the access token's %q claim holds %d groups, more than %d", clip(v.grp), len(list), MaxGroups)
	}
	for _, g := range list {
		if err := checkName(v.grp+" group", g, MaxGroupBytes); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// checkName bounds a name taken from a token: non-empty, valid UTF-8, no
// control or format characters (it is shown to operators), at most max
// bytes.
func checkName(what, s string, max int) error {
	switch {
	case s == "":
		return invalid("the access token's %s is empty", what)
	case len(s) > max:
		return invalid("the access token's %s is longer than %d bytes", what, max)
	case !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) >= 0:
		return invalid("the access token's %s holds control characters or invalid UTF-8", what)
	}
	return nil
}
