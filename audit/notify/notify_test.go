package notify

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
)

var secret = []byte("test-secret-0123456789abcdef")

// receiver records every POST it gets and answers with status(n), n the
// POST's number from 1.
type receiver struct {
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
	got    chan struct{}
	status func(n int) int
}

func newReceiver(t *testing.T, status func(int) int) (*receiver, *httptest.Server) {
	r := &receiver{got: make(chan struct{}, 100), status: status}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		r.heads = append(r.heads, req.Header.Clone())
		n := len(r.bodies)
		r.mu.Unlock()
		w.WriteHeader(r.status(n))
		r.got <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return r, srv
}

func (r *receiver) wait(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-r.got:
		case <-time.After(10 * time.Second):
			t.Fatalf("the receiver got %d POSTs, want %d", i, n)
		}
	}
}

func decision(id string, outcome audit.Outcome) *audit.Decision {
	return &audit.Decision{ID: id, Time: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), Tool: audit.ToolMayAct,
		Caller: audit.Caller{Transport: "stdio", Role: "evaluate"}, PropositionID: "P-db", ActionID: "a1",
		ActionKind: "db.migrate", Risk: "high", Outcome: outcome,
		Layers: []audit.Layer{{Layer: "warrant", Decision: audit.Verdict(outcome), Reasons: []string{"risk.high_needs_confirmation"}}}}
}

func newLog(t *testing.T, cfg Config) (*Log, *Notifier) {
	t.Helper()
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(memlog.New(nil), n)
	t.Cleanup(func() { _ = l.Close() })
	return l, n
}

func TestOneSignedPostPerPendingDecision(t *testing.T) {
	rcv, srv := newReceiver(t, func(int) int { return http.StatusNoContent })
	l, _ := newLog(t, Config{URL: srv.URL, Secret: secret})
	ctx := context.Background()
	for _, d := range []*audit.Decision{decision("d1", audit.OutcomeRequireConfirmation), decision("d2", audit.OutcomeMayAct),
		decision("d3", audit.OutcomeDeny), decision("d4", audit.OutcomeRequireConfirmation),
		// One worker sends in recording order: a wrong POST for d2 or d3
		// would arrive before d5's, so waiting for d5's sees it.
		decision("d5", audit.OutcomeRequireConfirmation)} {
		if err := l.Record(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	rcv.wait(t, 3)
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.bodies) != 3 {
		t.Fatalf("got %d POSTs, want one per pending decision (3)", len(rcv.bodies))
	}
	for i, want := range []string{"d1", "d4", "d5"} {
		h := rcv.heads[i]
		if err := Verify(secret, h.Get(HeaderTimestamp), h.Get(HeaderSignature), rcv.bodies[i], time.Now(), time.Minute); err != nil {
			t.Errorf("POST %d: %v", i, err)
		}
		if err := Verify([]byte("another secret"), h.Get(HeaderTimestamp), h.Get(HeaderSignature), rcv.bodies[i], time.Now(), time.Minute); err == nil {
			t.Errorf("POST %d verifies under a wrong secret", i)
		}
		var n Notice
		if err := json.Unmarshal(rcv.bodies[i], &n); err != nil {
			t.Fatal(err)
		}
		if n.Event != EventPending || n.DecisionID != want || n.Approve != "ewp-audit approve "+want || h.Get("Content-Type") != "application/json" {
			t.Errorf("POST %d: %+v", i, n)
		}
	}
}

func TestFailedRecordNotifiesNothing(t *testing.T) {
	rcv, srv := newReceiver(t, func(int) int { return 200 })
	l, _ := newLog(t, Config{URL: srv.URL, Secret: secret})
	d := decision("d1", audit.OutcomeRequireConfirmation)
	if err := l.Record(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(context.Background(), d); err == nil { // same id: refused by the store
		t.Fatal("a second decision with one id was recorded")
	}
	rcv.wait(t, 1)
	select {
	case <-rcv.got:
		t.Fatal("a refused Record was notified")
	case <-time.After(100 * time.Millisecond):
	}
}

func TestRetriesWithBackoff(t *testing.T) {
	rcv, srv := newReceiver(t, func(n int) int {
		if n < 3 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	var mu sync.Mutex
	var waits []time.Duration
	cfg := Config{URL: srv.URL, Secret: secret, Backoff: ExponentialBackoff(time.Second, time.Minute),
		Sleep: func(_ context.Context, d time.Duration) error {
			mu.Lock()
			waits = append(waits, d)
			mu.Unlock()
			return nil
		}}
	l, _ := newLog(t, cfg)
	if err := l.Record(context.Background(), decision("d1", audit.OutcomeRequireConfirmation)); err != nil {
		t.Fatal(err)
	}
	rcv.wait(t, 3)
	mu.Lock()
	defer mu.Unlock()
	if len(waits) != 2 || waits[0] != time.Second || waits[1] != 2*time.Second {
		t.Fatalf("waits between attempts %v, want [1s 2s]", waits)
	}
}

func TestGivesUpAfterMaxAttemptsAndOnRefusal(t *testing.T) {
	for _, tc := range []struct {
		status, posts int
	}{{http.StatusServiceUnavailable, 4}, {http.StatusBadRequest, 1}} {
		rcv, srv := newReceiver(t, func(int) int { return tc.status })
		l, _ := newLog(t, Config{URL: srv.URL, Secret: secret, MaxAttempts: 4,
			Sleep: func(context.Context, time.Duration) error { return nil }})
		if err := l.Record(context.Background(), decision("d1", audit.OutcomeRequireConfirmation)); err != nil {
			t.Fatal(err)
		}
		rcv.wait(t, tc.posts)
		select {
		case <-rcv.got:
			t.Errorf("status %d: more than %d attempts", tc.status, tc.posts)
		case <-time.After(150 * time.Millisecond):
		}
	}
}

func TestExponentialBackoffCaps(t *testing.T) {
	b := ExponentialBackoff(time.Second, 5*time.Second)
	var got []time.Duration
	for i := 1; i <= 5; i++ {
		got = append(got, b(i))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("backoff %v, want %v", got, want)
		}
	}
}

// TestFullQueueDropsWithoutBlocking: a receiver that never answers holds
// the worker; Record still returns at once and the overflow is counted.
func TestFullQueueDropsWithoutBlocking(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	l, n := newLog(t, Config{URL: srv.URL, Secret: secret, QueueSize: 2, Timeout: time.Minute})
	start := time.Now()
	for i := range 10 {
		if err := l.Record(context.Background(), decision(string(rune('a'+i)), audit.OutcomeRequireConfirmation)); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("10 Records took %v with a stuck receiver", el)
	}
	// One is with the worker (or about to be), two queued: 7 or 8 dropped.
	if d := n.Dropped(); d < 7 || d > 8 {
		t.Fatalf("dropped %d, want 7 or 8", d)
	}
}

func TestChatFormatsEscapeAgentText(t *testing.T) {
	d := decision("d1", audit.OutcomeRequireConfirmation)
	d.ActionKind = "<!channel> *rm* `x` [link](http://evil)\nforged line"
	for _, f := range []Format{FormatSlack, FormatTeams} {
		body, err := Payload(f, d)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]string
		if err := json.Unmarshal(body, &m); err != nil || len(m) != 1 {
			t.Fatalf("%s: body %s is not {\"text\": …}", f, body)
		}
		text := m["text"]
		for _, bad := range []string{"<!channel>", "\n", "<", ">"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s: text keeps %q: %s", f, bad, text)
			}
		}
		if f == FormatTeams && (strings.Contains(text, "[link]") || strings.Contains(text, " *rm*")) {
			t.Errorf("teams: markdown left active: %s", text)
		}
		if f == FormatSlack && strings.Count(text, "`")%2 != 0 {
			t.Errorf("slack: unbalanced code spans: %s", text)
		}
		if !strings.Contains(text, "d1") || !strings.Contains(text, "ewp-audit approve") {
			t.Errorf("%s: text %q does not say what waits and how to answer", f, text)
		}
	}
}

func TestConfigRefusals(t *testing.T) {
	for _, cfg := range []Config{{Secret: secret}, {URL: "http://x"}, {URL: "http://x", Secret: secret, Format: "email"}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestTransportErrorHidesTheURL(t *testing.T) {
	err := redactURL(&url.Error{Op: "Post", URL: "https://hooks.example/T000/SECRET", Err: errors.New("connection refused")})
	if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("%v", err)
	}
}
