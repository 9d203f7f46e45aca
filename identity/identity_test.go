package identity

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
)

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

func TestAgentCredentialShape(t *testing.T) {
	c, _, err := audit.NewAgentCredential()
	if err != nil {
		t.Fatal(err)
	}
	if !IsAgentCredential(c) {
		t.Fatalf("audit's credential %q does not pass IsAgentCredential", c)
	}
	for _, bad := range []string{c[:len(c)-1], c + "A", "ewp_agent_" + strings.Repeat("!", 43), strings.TrimPrefix(c, "ewp_"), ""} {
		if IsAgentCredential(bad) {
			t.Errorf("%q passes as a credential", bad)
		}
	}
}

func TestNoCredentialsConfiguredIsAnonymous(t *testing.T) {
	a := newAuth(t, Config{})
	for _, tok := range []string{"", "anything", "a.b.c", "ewp_agent_x"} {
		id, err := a.Authenticate(bearer(tok))
		if err != nil || id.Principal.Name != audit.Anonymous || id.Ingest || id.Credential != CredentialNone {
			t.Fatalf("token %q: %+v %v", tok, id, err)
		}
		if id.Unmatched != (tok != "") {
			t.Errorf("token %q: unmatched %v", tok, id.Unmatched)
		}
	}
}

func TestIngestTokenIsACredential(t *testing.T) {
	const tok = "0123456789abcdef0123"
	a := newAuth(t, Config{IngestToken: tok})
	for _, r := range []*http.Request{bearer(tok), withHeader(ingestHeader, tok), withHeader("Authorization", "bearer "+tok)} {
		id, err := a.Authenticate(r)
		if err != nil || !id.Ingest || id.Principal.Name != DefaultIngestName || id.Credential != CredentialIngestToken || id.Record() != "ingest-token" {
			t.Fatalf("%+v %v", id, err)
		}
	}
	named := newAuth(t, Config{IngestToken: tok, IngestName: "pipeline"})
	if id, _ := named.Authenticate(bearer(tok)); id.Principal.Name != "pipeline" {
		t.Fatalf("ingest name: %+v", id)
	}
	// Served anonymous as before: a wrong token is evaluate-only.
	for _, r := range []*http.Request{bearer("wrong"), withHeader(ingestHeader, "wrong")} {
		if id, err := a.Authenticate(r); err != nil || id.Ingest || !id.Unmatched || id.Principal.Name != audit.Anonymous {
			t.Fatalf("wrong token: %+v %v", id, err)
		}
	}
	if id, err := a.Authenticate(withHeader("Authorization", "Basic "+tok)); err != nil || id.Ingest || id.Unmatched {
		t.Fatalf("another scheme is no credential: %+v %v", id, err)
	}
	req := newAuth(t, Config{IngestToken: tok, Required: true})
	mustRefuse(t, req, bearer("wrong"), "no credential of this server")
	mustRefuse(t, req, withHeader(ingestHeader, "wrong"), "does not match")
	if e := mustRefuse(t, req, bearer(""), "needs a credential"); e.Code != "" {
		t.Fatalf("a missing credential has no error code (RFC 6750 §3.1): %q", e.Code)
	}
}

func withHeader(k, v string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set(k, v)
	return r
}

func TestAgentCredentialLookedUpOnEveryRequest(t *testing.T) {
	reg := newFakeAgents()
	alice := reg.add(t, "alice", false, "ops")
	bob := reg.add(t, "bob", true)
	a := newAuth(t, Config{Agents: reg})
	for i := 0; i < 3; i++ {
		id, err := a.Authenticate(bearer(alice))
		if err != nil || id.Principal.Name != "alice" || !slices.Equal(id.Principal.Groups, []string{"ops"}) ||
			id.Ingest || id.Credential != CredentialAgent || id.Record() != "agent:alice" {
			t.Fatalf("%+v %v", id, err)
		}
	}
	if reg.lookups != 3 {
		t.Fatalf("%d lookups for 3 requests: the register must be asked every time", reg.lookups)
	}
	if id, _ := a.Authenticate(bearer(bob)); !id.Ingest || id.Principal.Name != "bob" {
		t.Fatalf("an ingest agent: %+v", id)
	}
	if err := reg.RevokeAgent(context.Background(), "alice", testNow); err != nil {
		t.Fatal(err)
	}
	mustRefuse(t, a, bearer(alice), "unknown or revoked")
	if _, err := a.Authenticate(bearer(bob)); err != nil {
		t.Fatalf("bob is not revoked: %v", err)
	}
	mustRefuse(t, a, bearer(AgentCredentialPrefix+"short"), "malformed")
	other, _, _ := audit.NewAgentCredential()
	mustRefuse(t, a, bearer(other), "unknown or revoked")
}

func TestAgentRegisterDownIs503(t *testing.T) {
	reg := newFakeAgents()
	cred := reg.add(t, "alice", false)
	reg.err = errors.New("database is locked")
	_, err := newAuth(t, Config{Agents: reg}).Authenticate(bearer(cred))
	if e, ok := err.(*Error); !ok || e.Status != http.StatusServiceUnavailable || strings.Contains(e.Error(), cred) {
		t.Fatalf("%v", err)
	}
}

// A store answering the wrong row (or a revoked one) is not believed.
func TestAgentRowMustMatchTheCredential(t *testing.T) {
	cred, _, _ := audit.NewAgentCredential()
	for name, rec := range map[string]*audit.AgentRecord{
		"wrong hash": {Name: "mallory", CredentialSHA256: strings.Repeat("0", 64)},
		"revoked":    {Name: "alice", CredentialSHA256: audit.CredentialSHA256(cred), RevokedAt: testNow},
	} {
		a := newAuth(t, Config{Agents: rowAgents{rec}})
		if _, err := a.Authenticate(bearer(cred)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

type rowAgents struct{ r *audit.AgentRecord }

func (rowAgents) AddAgent(context.Context, *audit.AgentRecord) error      { return nil }
func (rowAgents) ListAgents(context.Context) ([]audit.AgentRecord, error) { return nil, nil }
func (rowAgents) RevokeAgent(context.Context, string, time.Time) error    { return nil }
func (a rowAgents) AgentByCredential(context.Context, string) (*audit.AgentRecord, error) {
	return a.r, nil
}

func TestAgentNamed(t *testing.T) {
	reg := newFakeAgents()
	reg.add(t, "alice", false, "ops")
	reg.add(t, "bob", false)
	ctx := context.Background()
	if r, err := AgentNamed(ctx, reg, "alice"); err != nil || r.Name != "alice" {
		t.Fatalf("%+v %v", r, err)
	}
	_ = reg.RevokeAgent(ctx, "bob", testNow)
	for name, want := range map[string]string{"bob": "revoked", "carol": "not in the register"} {
		if _, err := AgentNamed(ctx, reg, name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := AgentNamed(ctx, nil, "alice"); err == nil {
		t.Error("no register: accepted")
	}
}

func TestPrincipalContext(t *testing.T) {
	ctx := context.Background()
	if p := PrincipalFrom(ctx); p.Name != audit.Anonymous {
		t.Fatalf("%+v", p)
	}
	p := audit.Principal{Name: "alice", Groups: []string{"ops"}}
	if got := PrincipalFrom(WithPrincipal(ctx, p)); got.Name != "alice" || got.Groups[0] != "ops" {
		t.Fatalf("%+v", got)
	}
	if got := PrincipalFrom(WithPrincipal(ctx, audit.Principal{})); got.Name != audit.Anonymous {
		t.Fatalf("an empty name is anonymous: %+v", got)
	}
}

func TestTokenLengthBound(t *testing.T) {
	a := newAuth(t, Config{IngestToken: "0123456789abcdef"})
	long := strings.Repeat("x", MaxTokenBytes+1)
	e := mustRefuse(t, a, bearer(long), "longer than")
	if strings.Contains(e.Error(), long[:100]) {
		t.Fatal("the error repeats the token")
	}
	if id, err := a.Authenticate(bearer(strings.Repeat("x", MaxTokenBytes))); err != nil || !id.Unmatched {
		t.Fatalf("at the bound: %+v %v", id, err)
	}
}

type wrapped struct{ audit.Log }

func (w wrapped) Unwrap() audit.Log { return w.Log }

func TestAgentsOf(t *testing.T) {
	ml := memlog.New(time.Now)
	if AgentsOf(ml) == nil || AgentsOf(wrapped{wrapped{ml}}) == nil {
		t.Fatal("memlog's register is not found, or not through Unwrap")
	}
	if AgentsOf(nil) != nil || AgentsOf(struct{ audit.Log }{ml}) != nil {
		t.Fatal("a log without a register (or one that hides it) gives one")
	}
}
