package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ewp-go/ewp/console"
)

func TestNewRefusesWithoutOperatorToken(t *testing.T) {
	_, err := console.New(console.Config{Addr: "127.0.0.1:1"})
	if err != console.ErrNoOperatorToken {
		t.Fatalf("New without a token: %v, want ErrNoOperatorToken", err)
	}
}

func TestSignInSetsStrictSessionCookie(t *testing.T) {
	for _, tls := range []bool{false, true} {
		e := newEnv(t, func(c *console.Config) { c.TLS = tls })
		c := e.client()
		_, page := c.get("/console/login")
		_, _, hdr := c.do("POST", "/console/login", url.Values{"csrf": {csrfOf(t, page)}, "operator": {"Ada"}, "token": {testToken}}, nil)
		var got *http.Cookie
		for _, ck := range (&http.Response{Header: hdr}).Cookies() {
			if ck.Name == "ewp_console" {
				got = ck
			}
		}
		if got == nil || got.Value == "" {
			t.Fatalf("tls=%v: no session cookie in %v", tls, hdr["Set-Cookie"])
		}
		if !got.HttpOnly || got.SameSite != http.SameSiteStrictMode || got.Path != "/console/" || got.Secure != tls {
			t.Errorf("tls=%v: cookie %+v: want HttpOnly, SameSite=Strict, Path=/console/, Secure=%v", tls, got, tls)
		}
	}
}

func TestPagesNeedSignIn(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	for _, p := range []string{"/console/", "/console/propositions", "/console/inbox", "/console/graph", "/console/decisions"} {
		code, _, hdr := c.do("GET", p, nil, nil)
		if code != http.StatusSeeOther || hdr.Get("Location") != "/console/login" {
			t.Errorf("GET %s signed out: %d → %q, want 303 to the sign-in page", p, code, hdr.Get("Location"))
		}
	}
	code, _, _ := c.do("POST", "/console/approve", url.Values{"decision_id": {e.pending.ID}, "verdict": {"once"}}, nil)
	if code != http.StatusUnauthorized {
		t.Errorf("POST approve signed out: %d, want 401", code)
	}
}

func TestWrongTokenRefused(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	code, body := c.signIn("Mallory", "ingest-token-is-not-operator")
	if code != http.StatusUnauthorized || !strings.Contains(body, "Wrong operator token") {
		t.Fatalf("wrong token: %d, want 401 with a message\n%s", code, body)
	}
	if code, _ := c.get("/console/"); code != http.StatusSeeOther {
		t.Fatalf("after a wrong token the overview answered %d, want a redirect to sign in", code)
	}
}

// TestSignInThrottled: wrong tokens past the limit are answered 429, but
// the right token still signs in from the same address: a local process
// (the agent, on a loopback bind) failing on purpose cannot lock the
// operator out.
func TestSignInThrottled(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	for i := 0; i < 5; i++ {
		if code, _ := c.signIn("Mallory", "guess"); code != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d, want 401", i+1, code)
		}
	}
	for i := 0; i < 20; i++ {
		if code, _ := c.signIn("Mallory", "guess"); code != http.StatusTooManyRequests {
			t.Fatalf("wrong attempt %d past the limit: %d, want 429", 6+i, code)
		}
	}
	op := e.client() // the operator's browser, from the same loopback address
	if code, _ := op.signIn("Ada", testToken); code != http.StatusSeeOther {
		t.Fatalf("the right token while the address is throttled: %d, want 303 (signed in)", code)
	}
	if code, _ := op.get("/console/"); code != http.StatusOK {
		t.Fatalf("signed in, the overview answered %d", code)
	}
}

// TestLoginCSRFIsMintedByTheServer: the sign-in form's CSRF token must be
// one the console minted (any value sent with a matching cookie of the
// client's choosing once passed), and expires.
func TestLoginCSRFIsMintedByTheServer(t *testing.T) {
	var later atomic.Int64 // the clock's advance, read by the server's goroutines
	e := newEnv(t, func(c *console.Config) { c.Now = func() time.Time { return clockAt.Add(time.Duration(later.Load())) } })
	c := e.client()
	chosen := url.Values{"csrf": {"client-chosen"}, "operator": {"Ada"}, "token": {testToken}}
	code, _, _ := c.do("POST", "/console/login", chosen, map[string]string{"Cookie": "ewp_console_login=client-chosen"})
	if code != http.StatusForbidden {
		t.Fatalf("a client-chosen CSRF token: %d, want 403", code)
	}
	_, page := c.get("/console/login")
	tok := csrfOf(t, page)
	forged := []byte(tok)
	forged[len(forged)-2] ^= 1
	for _, bad := range []string{string(forged), tok + "x", tok[:len(tok)-4]} {
		if code, _, _ := c.do("POST", "/console/login", url.Values{"csrf": {bad}, "operator": {"Ada"}, "token": {testToken}}, nil); code != http.StatusForbidden {
			t.Errorf("altered token %q: %d, want 403", bad, code)
		}
	}
	later.Store(int64(11 * time.Minute))
	if code, _, _ := c.do("POST", "/console/login", url.Values{"csrf": {tok}, "operator": {"Ada"}, "token": {testToken}}, nil); code != http.StatusForbidden {
		t.Errorf("a token from a page served 11 minutes ago: %d, want 403", code)
	}
	_, page = c.get("/console/login")
	if code, _, _ := c.do("POST", "/console/login", url.Values{"csrf": {csrfOf(t, page)}, "operator": {"Ada"}, "token": {testToken}}, nil); code != http.StatusSeeOther {
		t.Errorf("a fresh minted token: %d, want 303", code)
	}
}

func TestNewRefusesWeakOperatorToken(t *testing.T) {
	for _, weak := range []string{"short", "operator-secret-for-tests", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"} {
		if _, err := console.New(console.Config{OperatorToken: weak, Addr: "127.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), "too weak") {
			t.Errorf("New with %q: %v", weak, err)
		}
		if console.OperatorTokenProblem(weak) == "" {
			t.Errorf("%q passes", weak)
		}
	}
	for _, strong := range []string{testToken, "4f9c2a61b07e83d5c1a9e6f20b4d7381", "0123456789abcdef-operator"} {
		if p := console.OperatorTokenProblem(strong); p != "" {
			t.Errorf("%q refused: %s", strong, p)
		}
	}
}

func TestSignInNeedsLoginCSRF(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	code, _, _ := c.do("POST", "/console/login", url.Values{"operator": {"Ada"}, "token": {testToken}}, nil)
	if code != http.StatusForbidden {
		t.Fatalf("sign-in without the form's CSRF token: %d, want 403", code)
	}
}

func TestPostWithoutCSRFRefused(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.mustSignIn()
	for _, form := range []url.Values{
		{"decision_id": {e.pending.ID}, "verdict": {"once"}},
		{"decision_id": {e.pending.ID}, "verdict": {"once"}, "csrf": {"not-this-sessions-token"}},
	} {
		code, body, _ := c.do("POST", "/console/approve", form, nil)
		if code != http.StatusForbidden || !strings.Contains(body, "CSRF") {
			t.Errorf("approve with csrf=%q: %d, want 403 naming CSRF", form.Get("csrf"), code)
		}
	}
	if aps := e.approvals(t, e.pending.ID); len(aps) != 0 {
		t.Fatalf("a refused form still recorded %d approval(s)", len(aps))
	}
}

func TestForeignOriginAndHostRefused(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	csrf := c.mustSignIn()
	form := url.Values{"csrf": {csrf}, "decision_id": {e.pending.ID}, "verdict": {"once"}}
	code, body, _ := c.do("POST", "/console/approve", form, map[string]string{"Origin": "http://evil.example"})
	if code != http.StatusForbidden || !strings.Contains(body, "evil.example") {
		t.Errorf("foreign Origin: %d, want 403 naming it", code)
	}
	code, _, _ = c.do("GET", "/console/", nil, map[string]string{"Host": "rebound.example:80"})
	if code != http.StatusForbidden {
		t.Errorf("foreign Host: %d, want 403", code)
	}
	if aps := e.approvals(t, e.pending.ID); len(aps) != 0 {
		t.Fatalf("a refused form still recorded %d approval(s)", len(aps))
	}
	// The console's own origin passes.
	code, _, _ = c.do("POST", "/console/approve", form, map[string]string{"Origin": e.srv.URL})
	if code != http.StatusSeeOther {
		t.Errorf("own Origin: %d, want 303", code)
	}
}

func TestSignOutEndsSession(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	csrf := c.mustSignIn()
	if code, _, _ := c.do("POST", "/console/logout", url.Values{"csrf": {csrf}}, nil); code != http.StatusSeeOther {
		t.Fatalf("sign out: %d", code)
	}
	if code, _ := c.get("/console/"); code != http.StatusSeeOther {
		t.Fatalf("after sign out: %d, want redirect to sign in", code)
	}
}

// A session ends on the server when its time is up, whatever the cookie
// says; the throttle forgets an address after its window.
func TestSessionExpiresAndThrottleWindowEnds(t *testing.T) {
	var now atomic.Int64
	now.Store(clockAt.UnixNano())
	e := newEnv(t, func(c *console.Config) {
		c.Now = func() time.Time { return time.Unix(0, now.Load()).UTC() }
		c.SessionTTL = time.Hour
	})
	c := e.client()
	c.mustSignIn()
	now.Add(int64(61 * time.Minute))
	if code, _ := c.get("/console/"); code != http.StatusSeeOther {
		t.Fatalf("an expired session still opened the overview (%d)", code)
	}
	m := e.client()
	for range 5 {
		m.signIn("Mallory", "guess")
	}
	if code, _ := m.signIn("Mallory", "guess"); code != http.StatusTooManyRequests {
		t.Fatalf("throttled: %d, want 429", code)
	}
	now.Add(int64(61 * time.Second))
	if code, _ := m.signIn("Mallory", "guess"); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token after the window: %d, want 401 (the throttle forgot the address)", code)
	}
}

// A form is read up to 64 KiB: a larger body is not parsed, so even the
// right token with a CSRF token signs nobody in, and nothing of the body
// is buffered past the limit.
func TestOversizedFormRefused(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	_, page := c.get("/console/login")
	form := url.Values{"csrf": {csrfOf(t, page)}, "operator": {"Ada"}, "token": {testToken},
		"pad": {strings.Repeat("x", 64<<10)}}
	if code, _, _ := c.do("POST", "/console/login", form, nil); code == http.StatusSeeOther {
		t.Fatalf("a %d-byte sign-in form was accepted", len(form.Encode()))
	}
	if code, _ := c.get("/console/"); code != http.StatusSeeOther {
		t.Fatalf("after an oversized sign-in the overview answered %d, want a redirect to sign in", code)
	}
}
