package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Cookie names. The session cookie is the operator's credential for the
// console; the login cookie carries the sign-in form's CSRF token before
// any session exists (so a foreign page cannot sign a browser in).
const (
	sessionCookie = "ewp_console"
	loginCookie   = "ewp_console_login"
	csrfField     = "csrf"
)

// Sign-in throttling: after maxFailures wrong tokens from one address
// within failureWindow, that address is refused until the window ends.
const (
	maxFailures   = 5
	failureWindow = time.Minute
)

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

// blocked reports whether addr has used up its attempts.
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

func (t *throttle) fail(addr string) {
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
	tok := randomToken()
	http.SetCookie(w, c.cookie(loginCookie, tok, 600))
	c.render(w, r, status, "login", &page{Title: "Sign in", CSRF: tok, Message: msg})
}

// login checks the sign-in form: the pre-session CSRF token, the throttle,
// then the operator token.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		if c.sessionOf(r) != nil {
			http.Redirect(w, r, BasePath, http.StatusSeeOther)
			return
		}
		c.loginPage(w, r, http.StatusOK, "")
		return
	}
	addr := remoteHost(r)
	if c.throttle.blocked(addr) {
		c.loginPage(w, r, http.StatusTooManyRequests, "Too many wrong tokens from your address: wait a minute and try again.")
		return
	}
	ck, err := r.Cookie(loginCookie)
	if err != nil || !equalSecret(ck.Value, r.PostFormValue(csrfField)) || r.PostFormValue(csrfField) == "" {
		c.loginPage(w, r, http.StatusForbidden, "The form expired or did not come from this console (CSRF token missing or wrong): sign in again from this page.")
		return
	}
	name := strings.TrimSpace(r.PostFormValue("operator"))
	if !validOperatorName(name) {
		c.loginPage(w, r, http.StatusBadRequest, "Give your name (1 to 64 printable characters): it is recorded with every approval you make.")
		return
	}
	if !equalSecret(r.PostFormValue("token"), c.cfg.OperatorToken) {
		c.throttle.fail(addr)
		c.loginPage(w, r, http.StatusUnauthorized, "Wrong operator token. Use the operator token (EWP_OPERATOR_TOKEN), not the agent's ingest token.")
		return
	}
	s := c.sessions.create(name)
	http.SetCookie(w, c.cookie(loginCookie, "", -1))
	http.SetCookie(w, c.cookie(sessionCookie, s.id, int(c.cfg.SessionTTL/time.Second)))
	http.Redirect(w, r, BasePath, http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, s *session) {
	c.sessions.end(s.id)
	http.SetCookie(w, c.cookie(sessionCookie, "", -1))
	http.Redirect(w, r, BasePath+"login", http.StatusSeeOther)
}
