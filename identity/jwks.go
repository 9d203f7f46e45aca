package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Bounds on the key set and its fetching.
const (
	// MaxJWKSBytes bounds a JWKS document, from a file or a URL.
	MaxJWKSBytes = 256 << 10
	// MaxJWKSKeys bounds the keys in it.
	MaxJWKSKeys = 64
	// JWKSFetchTimeout bounds one fetch of a JWKS URL.
	JWKSFetchTimeout = 5 * time.Second
	// JWKSRefreshInterval is the least time between two reloads: a token
	// with an unknown kid reloads the set (the issuer may have rotated),
	// but no caller can make the server fetch faster than this.
	JWKSRefreshInterval = 30 * time.Second
	// JWKSMaxAge is how long a loaded set is used before it is reloaded.
	JWKSMaxAge = time.Hour
	// minRSABits: a smaller RSA key in the set is not used.
	minRSABits = 2048
)

// keySet holds the JWKS, reloaded on an unknown kid and when old.
type keySet struct {
	loc     string // a file path or an http(s) URL
	shown   string // loc as errors show it: a URL without userinfo, query or fragment
	isURL   bool
	client  *http.Client
	timeout time.Duration // one fetch's bound (JWKSFetchTimeout)
	now     func() time.Time

	mu     sync.RWMutex
	keys   []jose.JSONWebKey
	loaded time.Time

	fetch   sync.Mutex // one reload at a time; readers never wait for it
	lastTry time.Time
}

func newKeySet(loc string, client *http.Client, timeout time.Duration, now func() time.Time) (*keySet, error) {
	if timeout <= 0 {
		timeout = JWKSFetchTimeout
	}
	ks := &keySet{loc: loc, shown: loc, client: client, timeout: timeout, now: now}
	if u, err := url.Parse(loc); err == nil && (u.Scheme == "https" || u.Scheme == "http") {
		if u.Host == "" {
			return nil, fmt.Errorf("identity: --jwks %s: the URL names no host", redactURL(u))
		}
		ks.isURL, ks.shown = true, redactURL(u)
		if ks.client == nil {
			ks.client = &http.Client{}
		}
		// A redirect could carry a token in its query into an error;
		// the operator names the final URL instead.
		c := *ks.client
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		ks.client = &c
	}
	return ks, nil
}

// redactURL is u without userinfo, query and fragment: the parts that
// may carry a secret never reach a log or an error.
func redactURL(u *url.URL) string {
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return v.String()
}

// key finds the verification key for a token's kid and alg, reloading
// the set once when the kid is unknown or the set is old.
func (ks *keySet) key(ctx context.Context, kid string, alg string) (*jose.JSONWebKey, error) {
	ks.mu.RLock()
	k, found := pick(ks.keys, kid, alg)
	old := ks.now().Sub(ks.loaded) > JWKSMaxAge
	ks.mu.RUnlock()
	if found && !old {
		return k, nil
	}
	if err := ks.reload(ctx); err != nil && !found {
		return nil, err
	}
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	if k, found = pick(ks.keys, kid, alg); !found {
		return nil, invalid("no key in the JWKS matches the token's kid %q and alg %s", clip(kid), alg)
	}
	return k, nil
}

// reload loads the set again unless it was tried within
// JWKSRefreshInterval; a failed reload keeps the keys it had.
func (ks *keySet) reload(ctx context.Context) error {
	ks.fetch.Lock()
	defer ks.fetch.Unlock()
	if !ks.lastTry.IsZero() && ks.now().Sub(ks.lastTry) < JWKSRefreshInterval {
		return nil
	}
	ks.lastTry = ks.now()
	keys, err := ks.load(ctx)
	if err != nil {
		return &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Reason: err.Error()}
	}
	ks.mu.Lock()
	ks.keys, ks.loaded = keys, ks.now()
	ks.mu.Unlock()
	return nil
}

// load reads and parses the set.
func (ks *keySet) load(ctx context.Context) ([]jose.JSONWebKey, error) {
	raw, err := ks.read(ctx)
	if err != nil {
		return nil, err
	}
	return parseJWKS(raw, ks.shown)
}

func (ks *keySet) read(ctx context.Context) ([]byte, error) {
	if !ks.isURL {
		f, err := os.Open(ks.loc)
		if err != nil {
			return nil, fmt.Errorf("identity: JWKS %s: %w", ks.shown, err)
		}
		defer f.Close()
		return ks.readCapped(f)
	}
	ctx, cancel := context.WithTimeout(ctx, ks.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.loc, nil)
	if err != nil {
		return nil, fmt.Errorf("identity: JWKS %s: the URL is not usable", ks.shown)
	}
	req.Header.Set("Accept", "application/json, application/jwk-set+json")
	resp, err := ks.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("identity: JWKS %s: fetching it failed: %v", ks.shown, ks.unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("identity: JWKS %s: answered HTTP %d, want 200", ks.shown, resp.StatusCode)
	}
	return ks.readCapped(resp.Body)
}

// unwrapURLError drops net/http's *url.Error, whose text repeats the
// whole URL, user information and query included.
func (ks *keySet) unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %v", ks.timeout)
	}
	return err
}

func (ks *keySet) readCapped(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("identity: JWKS %s: reading it failed: %v", ks.shown, ks.unwrapURLError(err))
	}
	if len(b) > MaxJWKSBytes {
		return nil, fmt.Errorf("identity: JWKS %s is larger than %d bytes", ks.shown, MaxJWKSBytes)
	}
	return b, nil
}

// parseJWKS keeps the set's public signing keys of the allowed types
// (RSA of 2048 bits or more, P-256, Ed25519); a key of another type, a
// private or symmetric key, or one for encryption is left out. A set
// that leaves no key is an error.
func parseJWKS(raw []byte, shown string) ([]jose.JSONWebKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("identity: JWKS %s is not a JSON key set ({\"keys\": [...]}): %v", shown, err)
	}
	if len(doc.Keys) > MaxJWKSKeys {
		return nil, fmt.Errorf("identity: JWKS %s holds %d keys, more than %d", shown, len(doc.Keys), MaxJWKSKeys)
	}
	var keys []jose.JSONWebKey
	for _, kr := range doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(kr); err != nil || !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if algFor(k.Key) != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("identity: JWKS %s has no usable public signing key (RSA of %d bits or more, EC P-256 or Ed25519)", shown, minRSABits)
	}
	return keys, nil
}

// allowedAlgs are the only algorithms a token may be signed with: never
// "none", never HMAC (whose key would be the public one).
var allowedAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA}

// algFor is the one allowed algorithm a key verifies; "" for none.
func algFor(key any) jose.SignatureAlgorithm {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() >= minRSABits {
			return jose.RS256
		}
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() {
			return jose.ES256
		}
	case ed25519.PublicKey:
		return jose.EdDSA
	}
	return ""
}

// pick finds the key for kid and alg. Without a kid the set must hold
// exactly one key for alg, so which key verified is never a guess.
func pick(keys []jose.JSONWebKey, kid, alg string) (*jose.JSONWebKey, bool) {
	var match *jose.JSONWebKey
	n := 0
	for i := range keys {
		k := &keys[i]
		if string(algFor(k.Key)) != alg || (k.Algorithm != "" && k.Algorithm != alg) {
			continue
		}
		if kid != "" && k.KeyID == kid {
			return k, true
		}
		if kid == "" {
			match, n = k, n+1
		}
	}
	return match, n == 1
}

// clip shortens a caller's string for a message.
func clip(s string) string {
	const n = 64
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
