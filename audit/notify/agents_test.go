package notify

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// TestAgentsThroughTheNotifier: a notifying log is still an audit.Agents,
// Results, OnceApprovals and Counters by type assertion, the inner log's.
func TestAgentsThroughTheNotifier(t *testing.T) {
	_, srv := newReceiver(t, func(int) int { return http.StatusNoContent })
	l, _ := newLog(t, Config{URL: srv.URL, Secret: secret})
	var logged audit.Log = l
	agents, ok := logged.(audit.Agents)
	if !ok {
		t.Fatal("a notifying log is not an audit.Agents")
	}
	ctx := context.Background()
	r := &audit.AgentRecord{Name: "builder", CredentialSHA256: audit.CredentialSHA256("c")}
	if err := agents.AddAgent(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got, err := agents.AgentByCredential(ctx, r.CredentialSHA256); err != nil || got.Name != "builder" {
		t.Fatalf("%+v %v", got, err)
	}
	if n, err := logged.(audit.Counters).Add(ctx, "k", time.Time{}, 2); err != nil || n != 2 {
		t.Fatalf("counter %d %v", n, err)
	}
	d := decision("d1", audit.OutcomeMayAct)
	if err := l.Record(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := logged.(audit.Results).RecordResult(ctx, &audit.Result{DecisionID: "d1", Status: audit.ResultOK}); err != nil {
		t.Fatal(err)
	}
	if _, err := logged.(audit.OnceApprovals).OnceApprovalFor(ctx, "builder", "t", "h", time.Now()); !errors.Is(err, audit.ErrNotFound) {
		t.Fatalf("once approval: %v", err)
	}
}
