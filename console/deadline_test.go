package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/internal/pgtest"
)

// frozenLog stands for a decision log on a frozen database (SIGSTOP):
// reading a decision never answers until its caller gives up.
type frozenLog struct{ auditstore.Log }

func (frozenLog) Decision(ctx context.Context, id string) (*audit.Decision, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A page whose store does not answer is answered at the console's
// per-request deadline with an error page saying so, instead of a
// connection that hangs.
func TestPageAnswersAtItsDeadline(t *testing.T) {
	const deadline = 300 * time.Millisecond
	e := newEnv(t, func(c *console.Config) {
		c.Log, c.RequestTimeout = frozenLog{c.Log.(auditstore.Log)}, deadline
	})
	c := e.client()
	c.mustSignIn()
	c.http.Timeout = 5 * time.Second
	start := time.Now()
	code, body := c.get("/console/decision?id=" + url.QueryEscape(e.pending.ID))
	if took := time.Since(start); took > deadline+time.Second {
		t.Fatalf("answered after %v with a %v deadline", took, deadline)
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "Timed out") || !strings.Contains(body, "300ms deadline") {
		t.Fatalf("want the timeout page (503), got %d:\n%s", code, body)
	}
}

// A chain walk an operator started runs on the console's lifetime: Close
// ends it and waits for it, so it never outlives shutdown.
func TestVerifyEndsWithTheConsole(t *testing.T) {
	started, ended := make(chan struct{}), make(chan struct{})
	var sawEnd atomic.Bool
	e := newEnv(t, func(c *console.Config) {
		c.LogVerify = func(ctx context.Context) (string, error) {
			close(started)
			defer close(ended)
			select {
			case <-ctx.Done():
				sawEnd.Store(true)
				return "", ctx.Err()
			case <-time.After(10 * time.Second):
				return "walked", nil
			}
		}
	})
	c := e.client()
	csrf := c.mustSignIn()
	if code, _, _ := c.do("POST", "/console/verify", url.Values{"csrf": {csrf}, "target": {"log"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("verify: %d", code)
	}
	<-started
	closed := make(chan struct{})
	go func() { e.con.Close(); close(closed) }()
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
		t.Fatal("the chain walk went on after the console was closed")
	}
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not return once the walk ended")
	}
	if !sawEnd.Load() {
		t.Fatal("the walk's context did not end with the console")
	}
}

// The same on a real PostgreSQL server frozen with SIGSTOP (connections
// open, nothing answers): the page is answered at its deadline.
func TestPageAnswersAtItsDeadlineWithPostgresFrozen(t *testing.T) {
	const deadline = time.Second
	e := newEnvOn(t, postgresStore, func(c *console.Config) { c.RequestTimeout = deadline })
	c := e.client()
	c.mustSignIn()
	c.http.Timeout = 20 * time.Second
	thaw := pgtest.Get(t).Freeze(t)
	defer thaw()
	start := time.Now()
	code, body := c.get("/console/decision?id=" + url.QueryEscape(e.pending.ID))
	if took := time.Since(start); took > deadline+2*time.Second {
		t.Fatalf("answered after %v with a %v deadline", took, deadline)
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "Timed out") {
		t.Fatalf("want the timeout page (503), got %d:\n%s", code, body)
	}
}
