package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// The session cookie is the operator's credential for the console; forms
// carry their CSRF token in csrfField.
const (
	sessionCookie = "ewp_console"
	csrfField     = "csrf"
)

// Sign-in throttling: after maxFailures wrong tokens from one address
// within failureWindow, that address's wrong tokens are answered 429
// until the window ends. A right token is never refused: any process on
// the host shares the operator's loopback address, and could otherwise
// lock the operator out by failing on purpose. Guessing is bounded by the
// token's strength instead (OperatorTokenProblem).
const (
	maxFailures   = 5
	failureWindow = time.Minute
)

// The sign-in form's CSRF token (before any session exists, so a foreign
// page cannot sign a browser in) is minted by the server: its expiry and
// a nonce, with their HMAC under a key drawn when the console starts. A
// token the client chose does not verify; one from a page served more
// than loginTokenTTL ago has expired.
const loginTokenTTL = 10 * time.Minute

// loginTokens mints and checks sign-in CSRF tokens.
type loginTokens struct {
	key []byte
	now func() time.Time
}

func newLoginTokens(now func() time.Time) *loginTokens {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic("console: no randomness: " + err.Error()) // crypto/rand never fails on supported systems
	}
	return &loginTokens{key: key, now: now}
}

func (l *loginTokens) mac(body []byte) []byte {
	m := hmac.New(sha256.New, l.key)
	m.Write([]byte("ewp-console-login\x00"))
	m.Write(body)
	return m.Sum(nil)
}

// mint is a fresh token: base64url of expiry (8 bytes), nonce (16), HMAC.
func (l *loginTokens) mint() string {
	body := make([]byte, 24)
	binary.BigEndian.PutUint64(body, uint64(l.now().Add(loginTokenTTL).Unix()))
	if _, err := rand.Read(body[8:]); err != nil {
		panic("console: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(append(body, l.mac(body)...))
}

// valid reports whether tok is a token this console minted that has not
// expired.
func (l *loginTokens) valid(tok string) bool {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) != 24+sha256.Size {
		return false
	}
	body, sum := b[:24], b[24:]
	if !hmac.Equal(sum, l.mac(body)) {
		return false
	}
	return l.now().Unix() <= int64(binary.BigEndian.Uint64(body))
}

// session is one signed-in operator. The CSRF token is bound to it: a form
// posted with another session's token, or none, is refused.
type session struct {
	id       string
	csrf     string
	operator string
	expires  time.Time
}

// sessions is the server-side session map. Nothing about a session lives
// in the cookie but its random id, so signing out or a restart ends it.
type sessions struct {
	mu  sync.Mutex
	m   map[string]*session
	ttl time.Duration
	now func() time.Time
}

func (s *sessions) create(operator string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for id, x := range s.m { // sweep expired ones while we hold the lock
		if now.After(x.expires) {
			delete(s.m, id)
		}
	}
	x := &session{id: randomToken(), csrf: randomToken(), operator: operator, expires: now.Add(s.ttl)}
	s.m[x.id] = x
	return x
}

func (s *sessions) get(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.m[id]
	if x == nil {
		return nil
	}
	if s.now().After(x.expires) {
		delete(s.m, id)
		return nil
	}
	return x
}

func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// MinOperatorTokenBits is the least strength OperatorTokenProblem takes,
// estimated as length × log2(distinct characters): an upper bound on a
// token's entropy, which refuses a short or repetitive token (a word, a
// name, "aaaa…") though it cannot prove one random. Since a right token
// is never throttled, this is what bounds guessing: at a million guesses a
// second, 2^96 takes longer than the universe has existed.
const MinOperatorTokenBits = 96

// OperatorTokenProblem says why token is too weak to be the operator
// token, or "" when it is strong enough. New refuses a weak one.
func OperatorTokenProblem(token string) string {
	distinct := map[rune]bool{}
	for _, r := range token {
		distinct[r] = true
	}
	n := utf8.RuneCountInString(token)
	bits := 0.0
	if len(distinct) > 1 {
		bits = float64(n) * math.Log2(float64(len(distinct)))
	}
	if bits >= MinOperatorTokenBits {
		return ""
	}
	return fmt.Sprintf("the operator token is too weak to guard the console: %d characters, %d different, about %.0f bits "+
		"(length × log2 of the different characters); it needs at least %d, since a right token is never locked out "+
		"and only its strength bounds guessing: make one with `openssl rand -hex 32`", n, len(distinct), bits, MinOperatorTokenBits)
}

// randomToken is 32 bytes from the system's CSPRNG, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("console: no randomness: " + err.Error()) // crypto/rand never fails on supported systems
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// equalSecret compares two secrets in time independent of where they
// differ (and of their lengths: both are hashed first).
func equalSecret(a, b string) bool {
	x, y := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(x[:], y[:]) == 1
}

// throttle counts failed sign-ins per remote address.
type throttle struct {
	mu  sync.Mutex
	m   map[string]*failures
	now func() time.Time
}

type failures struct {
	n     int
	since time.Time
}

// blocked reports whether addr has used up its wrong attempts.
func (t *throttle) blocked(addr string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.m[addr]
	if f == nil {
		return false
	}
	if t.now().Sub(f.since) > failureWindow {
		delete(t.m, addr)
		return false
	}
	return f.n >= maxFailures
}

// maxTracked bounds the addresses the throttle remembers; past it, the
// expired entries are swept.
const maxTracked = 10_000

// fail counts a wrong token from addr and reports whether that attempt
// used up its last one (the moment to tell the operator).
func (t *throttle) fail(addr string) (limitReached bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.m) >= maxTracked {
		for a, f := range t.m {
			if t.now().Sub(f.since) > failureWindow {
				delete(t.m, a)
			}
		}
	}
	f := t.m[addr]
	if f == nil || t.now().Sub(f.since) > failureWindow {
		f = &failures{since: t.now()}
		t.m[addr] = f
	}
	f.n++
	return f.n == maxFailures
}

func remoteHost(r *http.Request) string {
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return h
}

// allowedHosts is the set of host:port values requests may name in Host
// and Origin: the rule of /mcp (EWP.md §11, against DNS rebinding). The
// bound address; for a loopback bind, the other loopback names with the
// same port; and whatever the operator allowed.
func allowedHosts(addr string, extra []string) (map[string]bool, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("console: Config.Addr %q: want host:port, the address the server listens on: %w", addr, err)
	}
	hosts := map[string]bool{strings.ToLower(net.JoinHostPort(host, port)): true}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			hosts[net.JoinHostPort(h, port)] = true
		}
	}
	for _, h := range extra {
		hosts[strings.ToLower(h)] = true
	}
	return hosts, nil
}

// hostOK checks Host on every request, and Origin whenever the browser
// sends one: a page of another site (or a rebound DNS name) names itself
// there.
func (c *Console) hostOK(r *http.Request) (string, bool) {
	if !c.hosts[strings.ToLower(r.Host)] {
		return fmt.Sprintf("Host %q is not this server's address.", r.Host), false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return "", true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !c.hosts[strings.ToLower(u.Host)] {
		return fmt.Sprintf("Origin %q is not this server: forms are accepted only from the console's own pages.", origin), false
	}
	return "", true
}

// validOperatorName accepts a short printable name for the record.
func validOperatorName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func (c *Console) cookie(name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: name, Value: value, Path: BasePath, MaxAge: maxAge,
		HttpOnly: true, Secure: c.cfg.TLS, SameSite: http.SameSiteStrictMode,
	}
}

// sessionOf returns the request's live session, or nil.
func (c *Console) sessionOf(r *http.Request) *session {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return nil
	}
	return c.sessions.get(ck.Value)
}

// loginPage serves the sign-in form with a fresh pre-session CSRF token.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "login", &page{Title: "Sign in", CSRF: c.logins.mint(), Message: msg})
}

// login checks the sign-in form: the pre-session CSRF token, the name,
// then the operator token; a wrong token is counted, and past the limit
// answered 429. A right one always signs in (see maxFailures).
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		if c.sessionOf(r) != nil {
			http.Redirect(w, r, BasePath, http.StatusSeeOther)
			return
		}
		c.loginPage(w, r, http.StatusOK, "")
		return
	}
	if !c.logins.valid(r.PostFormValue(csrfField)) {
		c.loginPage(w, r, http.StatusForbidden, "The form expired or did not come from this console (CSRF token missing or wrong): sign in again from this page.")
		return
	}
	name := strings.TrimSpace(r.PostFormValue("operator"))
	if !validOperatorName(name) {
		c.loginPage(w, r, http.StatusBadRequest, "Give your name (1 to 64 printable characters): it is recorded with every approval you make.")
		return
	}
	if !equalSecret(r.PostFormValue("token"), c.cfg.OperatorToken) {
		c.wrongToken(w, r)
		return
	}
	s := c.sessions.create(name)
	http.SetCookie(w, c.cookie(sessionCookie, s.id, int(c.cfg.SessionTTL/time.Second)))
	http.Redirect(w, r, BasePath, http.StatusSeeOther)
}

// wrongToken answers a wrong operator token: 401, or 429 once its address
// has failed maxFailures times within failureWindow; reaching the limit is
// logged, so the operator learns someone is guessing.
func (c *Console) wrongToken(w http.ResponseWriter, r *http.Request) {
	addr := remoteHost(r)
	over := c.throttle.blocked(addr) // the limit was reached before this one
	if c.throttle.fail(addr) {
		c.cfg.Logger.Warn("console: wrong operator tokens keep arriving; a right token still signs in",
			"from", addr, "wrong", maxFailures, "within", failureWindow)
	}
	if over {
		c.loginPage(w, r, http.StatusTooManyRequests, "Too many wrong tokens from your address: wait a minute and try again.")
		return
	}
	c.loginPage(w, r, http.StatusUnauthorized, "Wrong operator token. Use the operator token (EWP_OPERATOR_TOKEN), not the agent's ingest token.")
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, s *session) {
	c.sessions.end(s.id)
	http.SetCookie(w, c.cookie(sessionCookie, "", -1))
	http.Redirect(w, r, BasePath+"login", http.StatusSeeOther)
}
