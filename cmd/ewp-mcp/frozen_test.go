package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	auditpg "github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/internal/pgtest"
)

// TestMayActWithTheDecisionLogFrozen: ewp-mcp recording in a PostgreSQL
// decision log that is frozen (SIGSTOP) answers may_act
// EWP_REFUSE_TIMEOUT by its --request-timeout (not EWP_INTERNAL_ERROR
// after it), and the refusal is on record once the database thaws.
func TestMayActWithTheDecisionLogFrozen(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	if err := auditpg.Init(ctx, url, ""); err != nil {
		t.Fatal(err)
	}
	const deadline = 3 * time.Second
	p := startMCP(t, "--db", demoLedgerFile(t), "--audit", url, "--http", "127.0.0.1:0", "--request-timeout", deadline.String())
	args := map[string]any{"proposition_id": "P-api-cert-valid",
		"action": map[string]any{"action_id": "a", "kind": "read", "risk": "low", "reversible": true}}
	if r := p.call("may_act", args); r.code != "" {
		t.Fatalf("before the freeze: %+v", r)
	}
	thaw := pgtest.Get(t).Freeze(t)
	start := time.Now()
	client := &http.Client{Timeout: 4 * deadline} // a server that never answers fails the test, not hangs it
	res, err := client.Post(p.url, "application/json", strings.NewReader(callBody(99, "may_act", args)))
	took := time.Since(start)
	thaw()
	if err != nil {
		t.Fatalf("with the log frozen, no answer after %v: %v", took, err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	_, r := decodeReply(t, b)
	if r.code != "EWP_REFUSE_TIMEOUT" || took > deadline+time.Second {
		t.Fatalf("with the log frozen: %s after %v, want EWP_REFUSE_TIMEOUT by %v", b, took, deadline)
	}
	l, err := auditpg.Open(ctx, url, auditpg.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 100 {
		refused, err := l.List(ctx, audit.Filter{Outcome: audit.OutcomeRefused})
		if err != nil {
			t.Fatal(err)
		}
		if len(refused) == 1 && refused[0].Code == "EWP_REFUSE_TIMEOUT" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the refusal answered at the deadline is not on record after the thaw")
}
