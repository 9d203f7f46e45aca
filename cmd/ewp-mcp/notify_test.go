package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit/notify"
	"github.com/ewp-go/ewp/fixtures"
)

const webhookSecret = "webhook-secret-0123456789abcdef"

func secretFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "webhook.secret")
	if err := os.WriteFile(f, []byte(webhookSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// hook is a webhook receiver: what it got, by decision_id, and whether
// each signature verified.
type hook struct {
	mu       sync.Mutex
	got      map[string]int
	bad      []string
	arrivals chan struct{}
}

func newHook(t *testing.T) (*hook, string) {
	h := &hook{got: map[string]int{}, arrivals: make(chan struct{}, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var n notify.Notice
		err := json.Unmarshal(body, &n)
		if err == nil {
			err = notify.Verify([]byte(webhookSecret), r.Header.Get(notify.HeaderTimestamp), r.Header.Get(notify.HeaderSignature), body, time.Now(), time.Minute)
		}
		h.mu.Lock()
		if err != nil {
			h.bad = append(h.bad, err.Error())
		}
		h.got[n.DecisionID]++
		h.mu.Unlock()
		h.arrivals <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return h, srv.URL
}

// TestWebhookGetsOneSignedPostPerPendingDecision: ewp-mcp as a process
// with --notify-url; each REQUIRE_CONFIRMATION may_act answer is followed
// by exactly one POST naming its decision, whose signature verifies; a
// MAY_ACT or DENY is not notified.
func TestWebhookGetsOneSignedPostPerPendingDecision(t *testing.T) {
	h, url := newHook(t)
	policies := writePolicies(t, string(fixtures.DemoPolicies))
	p := startMCP(t, "--db", demoLedgerFile(t), "--policies", policies, "--operator-keys", keysFile(t),
		"--http", "127.0.0.1:0", "--notify-url", url, "--notify-secret-file", secretFile(t))
	var pending []string
	ask := func(i int) {
		r := p.call("may_act", deleteOn("P-api-cert-valid", "rm", "protected/report"+string(rune('a'+i))+".txt"))
		if r.out["decision"] != "REQUIRE_CONFIRMATION" {
			t.Fatalf("want REQUIRE_CONFIRMATION: %+v", r)
		}
		pending = append(pending, r.out["decision_id"].(string))
	}
	for i := range 3 {
		ask(i)
	}
	if r := p.call("may_act", deleteOn("", "rm", "/etc/passwd")); r.out["decision"] != "DENY" {
		t.Fatalf("want DENY: %+v", r)
	}
	// Notices go out in recording order: a wrong POST for the DENY would
	// arrive before this last pending decision's, so waiting for every
	// pending one sees it.
	ask(3)
	for range pending {
		select {
		case <-h.arrivals:
		case <-time.After(10 * time.Second):
			t.Fatalf("the webhook got fewer than %d POSTs: %s", len(pending), p.errb.String())
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.bad) > 0 {
		t.Fatalf("signatures: %v", h.bad)
	}
	if len(h.got) != len(pending) {
		t.Fatalf("POSTs by decision %v, want one for each of %v", h.got, pending)
	}
	for _, id := range pending {
		if h.got[id] != 1 {
			t.Errorf("decision %s notified %d times", id, h.got[id])
		}
	}
	if strings.Contains(p.errb.String(), webhookSecret) {
		t.Error("the webhook secret is in the log")
	}
}

// TestBadReceiverNeverDelaysTheGate: a receiver that is down, one that
// takes 30 s and one that answers 500 each leave may_act's answers as
// fast and as decided as with none. The slow one is released when the
// test ends, so the test itself takes a few seconds.
func TestBadReceiverNeverDelaysTheGate(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		select {
		case <-time.After(30 * time.Second):
		case <-release:
		}
	}))
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }))
	t.Cleanup(func() { close(release); slow.Close(); failing.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/hook"
	ln.Close() // nothing listens there now
	policies := writePolicies(t, string(fixtures.DemoPolicies))
	for name, url := range map[string]string{"down": down, "slow": slow.URL, "500": failing.URL} {
		t.Run(name, func(t *testing.T) {
			p := startMCP(t, "--db", demoLedgerFile(t), "--policies", policies, "--operator-keys", keysFile(t),
				"--http", "127.0.0.1:0", "--notify-url", url, "--notify-secret-file", secretFile(t))
			for i := range 20 {
				start := time.Now()
				r := p.call("may_act", deleteOn("P-api-cert-valid", "rm", "protected/f"+string(rune('a'+i))+".txt"))
				if el := time.Since(start); el > 2*time.Second {
					t.Fatalf("call %d took %v with a %s receiver", i, el, name)
				}
				if r.out["decision"] != "REQUIRE_CONFIRMATION" || r.out["decision_id"] == nil {
					t.Fatalf("call %d: %+v", i, r)
				}
			}
			if r := p.call("may_act", deleteOn("", "rm", "/etc/passwd")); r.out["decision"] != "DENY" {
				t.Fatalf("want DENY: %+v", r)
			}
		})
	}
}

func TestNotifyFlagsRefused(t *testing.T) {
	sf := secretFile(t)
	short := filepath.Join(t.TempDir(), "short")
	_ = os.WriteFile(short, []byte("abc"), 0o600)
	db := ledgerFile(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--notify-url", "http://127.0.0.1:9/hook"}, "--notify-secret-file"},
		{[]string{"--notify-secret-file", sf}, "needs --notify-url"},
		{[]string{"--notify-url", "ftp://x/", "--notify-secret-file", sf}, "http:// or https://"},
		{[]string{"--notify-url", "http://x/", "--notify-secret-file", sf, "--notify-format", "email"}, "generic, slack or teams"},
		{[]string{"--notify-url", "http://x/", "--notify-secret-file", sf, "--audit", "off"}, "--audit off"},
	} {
		r := runWith(t, append([]string{"--db", db}, tc.args...), env(), "")
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 naming %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	r := runWith(t, []string{"--db", db, "--notify-url", "http://127.0.0.1:9/", "--notify-secret-file", short}, env(), "")
	if r.code != 1 || !strings.Contains(r.stderr, "at least 16") || strings.Contains(r.stderr, "abc") {
		t.Errorf("short secret: exit %d, %q", r.code, r.stderr)
	}
}
