package identity

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
)

// TestRecheckSeesARevocation: a server started for one agent looks it up
// on every call, so a revocation after start refuses the next call.
func TestRecheckSeesARevocation(t *testing.T) {
	reg := newFakeAgents()
	reg.add(t, "alice", false, "ops")
	ctx := context.Background()
	if err := Recheck(ctx); err != nil {
		t.Fatalf("no stdio agent: %v", err)
	}
	rec, err := AgentNamed(ctx, reg, "alice")
	if err != nil {
		t.Fatal(err)
	}
	ctx = WithStdioAgent(ctx, reg, rec)
	if p := PrincipalFrom(ctx); p.Name != "alice" || len(p.Groups) != 1 {
		t.Fatalf("principal %+v", p)
	}
	before := reg.lookups
	for i := 0; i < 2; i++ {
		if err := Recheck(ctx); err != nil {
			t.Fatalf("a live agent: %v", err)
		}
	}
	if reg.lookups-before != 2 {
		t.Fatalf("%d lookups for 2 calls", reg.lookups-before)
	}
	if err := reg.RevokeAgent(ctx, "alice", testNow); err != nil {
		t.Fatal(err)
	}
	mustRecheck(t, ctx, CodeAgentRevoked, `agent "alice" was revoked`)
	reg.err = errors.New("database is locked")
	mustRecheck(t, ctx, "EWP_STORE_UNAVAILABLE", "could not be read")
}

// A register that answers another agent's row is not believed.
func TestRecheckWantsTheSameAgent(t *testing.T) {
	ctx := WithStdioAgent(context.Background(), rowAgents{&audit.AgentRecord{Name: "mallory"}},
		&audit.AgentRecord{Name: "alice", CredentialSHA256: strings.Repeat("a", 64)})
	mustRecheck(t, ctx, CodeAgentRevoked, "alice")
}

func mustRecheck(t *testing.T, ctx context.Context, code, want string) {
	t.Helper()
	re := Recheck(ctx)
	if re == nil || re.Code != code || !strings.Contains(re.Error(), want) {
		t.Fatalf("Recheck = %v, want %s mentioning %q", re, code, want)
	}
}
