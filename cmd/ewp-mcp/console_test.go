package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/syncbuf"
)

// The operator token follows the ingest token's rules (never on the
// command line, whitespace refused, short warned, not both sources), is
// for --http only, and is never the agent's ingest token.
func TestOperatorTokenConfig(t *testing.T) {
	db := ledgerFile(t)
	http := []string{"--db", db, "--http", "127.0.0.1:0"}
	strong := "0123456789abcdef-operator"
	file := filepath.Join(t.TempDir(), "operator")
	_ = os.WriteFile(file, []byte(strong+"\n"), 0o600)
	refused := []struct {
		args []string
		env  func(string) string
		want []string
	}{
		{append(http, "--operator-token", strong), env(), []string{"visible to every user", "EWP_OPERATOR_TOKEN", "--operator-token-file"}},
		{append(http, "--operator-token="+strong), env(), []string{"visible to every user"}},
		{http, env("EWP_OPERATOR_TOKEN", " \t\n"), []string{"EWP_OPERATOR_TOKEN holds only whitespace"}},
		{append(http, "--operator-token-file", file), env("EWP_OPERATOR_TOKEN", strong), []string{"operator token is given twice"}},
		{http, env("EWP_OPERATOR_TOKEN", strong, "EWP_INGEST_TOKEN", strong), []string{"equals the ingest token", "approve its own actions"}},
		{append(append([]string{}, http...), "--operator-token-file", file), env("EWP_INGEST_TOKEN", strong), []string{"equals the ingest token"}},
		{[]string{"--db", db, "--operator-token-file", file}, env(), []string{"--operator-token-file is for --http"}},
	}
	for _, tc := range refused {
		_, err := parseConfig(tc.args, tc.env)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v, want %q", tc.args, err, w)
			}
		}
	}
	blank := filepath.Join(t.TempDir(), "blank")
	_ = os.WriteFile(blank, []byte(" \n"), 0o600)
	if _, err := parseConfig(append(http, "--operator-token-file", blank), env()); err == nil || !strings.Contains(err.Error(), "only whitespace") {
		t.Errorf("whitespace token file: %v", err)
	}

	c, err := parseConfig(append(http, "--operator-token-file", file), env("EWP_INGEST_TOKEN", "another-token-0123456789"))
	if err != nil || c.operator != strong || c.token == c.operator || len(c.notes) != 0 {
		t.Errorf("token file: %+v %v", c, err)
	}
	// A weak operator token is refused, not warned: a right token is never
	// throttled (a local process could otherwise lock the operator out),
	// so its strength alone bounds guessing.
	for _, weak := range []string{"short", "operator-secret-for-tests", strings.Repeat("ab", 40)} {
		_, err = parseConfig(http, env("EWP_OPERATOR_TOKEN", weak))
		if err == nil || !strings.Contains(err.Error(), "too weak") || !strings.Contains(err.Error(), "EWP_OPERATOR_TOKEN") || !strings.Contains(err.Error(), "openssl rand") {
			t.Errorf("weak token %q: %v", weak, err)
		}
	}
	c, err = parseConfig([]string{"--db", db}, env("EWP_OPERATOR_TOKEN", strong))
	if err != nil || c.operator != "" || len(c.notes) != 1 || !strings.Contains(c.notes[0], "ignored on stdio") {
		t.Errorf("stdio: %+v %v", c, err)
	}
	if c, err := parseConfig(http, env()); err != nil || c.operator != "" {
		t.Errorf("no token, no console: %+v %v", c, err)
	}
}

// --help documents the console's credential.
func TestHelpDocumentsTheConsole(t *testing.T) {
	r := runWith(t, []string{"--help"}, env(), "")
	for _, w := range []string{"--operator-token-file", "EWP_OPERATOR_TOKEN", "/console/"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("--help lacks %q", w)
		}
	}
}

// serveInProcess runs the command over HTTP on the real ledger opener
// until the test ends; it returns the server's base URL and its logs.
func serveInProcess(t *testing.T, args []string, getenv func(string) string) (string, *syncbuf.Buffer) {
	t.Helper()
	var out, errb syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, getenv, strings.NewReader(""), &out, &errb, openStore) }()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("exit %d: %s", code, errb.String())
			}
		case <-time.After(15 * time.Second):
			t.Error("no graceful shutdown")
		}
	})
	return strings.TrimSuffix(waitForURL(t, &errb), "/mcp"), &errb
}

func get(t *testing.T, url, host string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The console is served beside /mcp only with an operator token; with
// --audit off it still serves the evidence pages (and says the inbox is
// off); with --demo it shows the demo ledger. Host is checked as for /mcp.
func TestConsoleServedBesideMCP(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ewp.sqlite")
	if err := fillDemo(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	token := "0123456789abcdef-operator"
	base, logs := serveInProcess(t, []string{"--db", db, "--http", "127.0.0.1:0", "--audit", "off"}, env("EWP_OPERATOR_TOKEN", token))
	if c := get(t, base+"/console/login", ""); c != http.StatusOK {
		t.Errorf("sign-in page: %d", c)
	}
	if c := get(t, base+"/console/", ""); c != http.StatusSeeOther {
		t.Errorf("signed out overview: %d, want a redirect to sign in", c)
	}
	if c := get(t, base+"/console/login", "evil.example:80"); c != http.StatusForbidden {
		t.Errorf("foreign Host: %d", c)
	}
	if !strings.Contains(logs.String(), "no inbox") || !strings.Contains(logs.String(), "/console/") {
		t.Errorf("logs: %s", logs.String())
	}

	plain, _ := serveInProcess(t, []string{"--db", db, "--http", "127.0.0.1:0", "--audit", "off"}, env())
	if c := get(t, plain+"/console/login", ""); c != http.StatusNotFound {
		t.Errorf("without an operator token the console must not exist: %d", c)
	}

	demo, _ := serveInProcess(t, []string{"--demo", "--http", "127.0.0.1:0"}, env("EWP_OPERATOR_TOKEN", token))
	c := signedIn(t, demo, token)
	// The list comes from the background state summary, ready moments
	// after the start.
	var page string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if page = fetch(t, c, demo+"/console/propositions"); strings.Contains(page, "P-db-major-version") && strings.Contains(page, "P-backup-restores") {
			return
		}
	}
	t.Errorf("--demo: the console does not show the demo ledger: %s", page)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signedIn signs a cookie-keeping client in to the console at base, as
// the sign-in form does.
func signedIn(t *testing.T, base, token string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	m := csrfRE.FindStringSubmatch(fetch(t, c, base+"/console/login"))
	if m == nil {
		t.Fatal("no CSRF token on the sign-in form")
	}
	resp, err := c.PostForm(base+"/console/login", url.Values{"csrf": {m[1]}, "operator": {"Ada"}, "token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/console/" {
		t.Fatalf("sign in: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	return c
}

func fetch(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
