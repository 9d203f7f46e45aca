package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/internal/oauthtest"
)

// agentsServer is an HTTP test server whose decision log is also the
// agent register, with the ingest token and the given OAuth settings.
type agentsServer struct {
	ts   *httptest.Server
	ml   *memlog.Log
	logs *syncBuf
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newAgentsServer(t *testing.T, oauth *identity.OAuth) *agentsServer {
	t.Helper()
	logs := &syncBuf{}
	srv, ml, _ := loggedServer(t, WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	ts := httptest.NewUnstartedServer(nil)
	addr := ts.Listener.Addr().String()
	auth, err := identity.New(context.Background(), identity.Config{Agents: ml, IngestToken: testToken, OAuth: oauth,
		Resource: "http://" + addr + EndpointPath, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	h, err := srv.HTTPHandler(HTTPConfig{Addr: addr, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(ts.Close)
	return &agentsServer{ts: ts, ml: ml, logs: logs}
}

// addAgent creates an agent as ewp-audit agents add does and returns its
// credential.
func (a *agentsServer) addAgent(t *testing.T, name string, groups ...string) string {
	t.Helper()
	cred, sum, err := audit.NewAgentCredential()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ml.AddAgent(context.Background(), &audit.AgentRecord{Name: name, Groups: groups, CredentialSHA256: sum}); err != nil {
		t.Fatal(err)
	}
	return cred
}

func (a *agentsServer) dial(t *testing.T, token string) *client.Client {
	t.Helper()
	var opts []transport.StreamableHTTPCOption
	if token != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	}
	c, err := client.NewStreamableHttpClient(a.ts.URL+EndpointPath, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return start(t, c)
}

// post sends one tools/call with token and returns the response.
func (a *agentsServer) post(t *testing.T, token string) (*http.Response, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"may_act","arguments":` + string(mustJSONText(t, confirmArgs())) + `}}`
	req, _ := http.NewRequest(http.MethodPost, a.ts.URL+EndpointPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func readDecision(t *testing.T, c *client.Client, id string) outcome {
	t.Helper()
	return call(t, c, "decision_get", obj{"decision_id": id})
}

func TestTwoAgentsSeeOnlyTheirOwnDecisions(t *testing.T) {
	a := newAgentsServer(t, nil)
	alice := a.dial(t, a.addAgent(t, "alice", "ops"))
	bob := a.dial(t, a.addAgent(t, "bob"))
	anon := a.dial(t, "")
	ingest := a.dial(t, testToken)
	aliceID := decisionID(t, mustOK(t, call(t, alice, "may_act", confirmArgs())))
	bobID := decisionID(t, mustOK(t, call(t, bob, "may_act", confirmArgs())))
	anonID := decisionID(t, mustOK(t, call(t, anon, "may_act", confirmArgs())))

	d, err := a.ml.Decision(context.Background(), aliceID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Agent != "alice" || !slices.Equal(d.AgentGroups, []string{"ops"}) || d.Caller.Credential != "agent:alice" || d.Caller.Role != "evaluate" {
		t.Fatalf("alice's decision records agent %q groups %v caller %+v", d.Agent, d.AgentGroups, d.Caller)
	}
	if got := mustOK(t, readDecision(t, alice, aliceID)); got["decision"].(map[string]any)["agent"] != "alice" {
		t.Fatalf("alice reads her own: %v", got)
	}
	mustOK(t, readDecision(t, bob, bobID))
	mustOK(t, readDecision(t, anon, anonID))
	for _, tc := range []struct {
		who string
		c   *client.Client
		id  string
	}{{"alice reads bob's", alice, bobID}, {"bob reads alice's", bob, aliceID}, {"anonymous reads alice's", anon, aliceID}, {"alice reads anonymous's", alice, anonID}} {
		msg := mustRefuse(t, readDecision(t, tc.c, tc.id), CodeUnknownDecision)
		if !strings.Contains(msg, "no decision") {
			t.Errorf("%s: %q should read as an unknown decision", tc.who, msg)
		}
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = decisionPrefix + tc.id
		if _, err := tc.c.ReadResource(context.Background(), req); err == nil || !strings.Contains(err.Error(), CodeUnknownDecision) {
			t.Errorf("%s through the resource: %v", tc.who, err)
		}
	}
	for _, id := range []string{aliceID, bobID, anonID} {
		mustOK(t, readDecision(t, ingest, id)) // the ingest role reads every decision
	}
}

func TestRevokedCredentialRefusedAtOnce(t *testing.T) {
	a := newAgentsServer(t, nil)
	cred := a.addAgent(t, "alice")
	if resp, body := a.post(t, cred); resp.StatusCode != 200 || !strings.Contains(body, "decision_id") {
		t.Fatalf("before revocation: %d %s", resp.StatusCode, body)
	}
	if err := a.ml.RevokeAgent(context.Background(), "alice", testNow); err != nil {
		t.Fatal(err)
	}
	resp, body := a.post(t, cred)
	want := `Bearer resource_metadata="` + a.ts.URL + identity.WellKnownPath + `/mcp", error="invalid_token"`
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), want) {
		t.Fatalf("after revocation: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	if strings.Contains(body+resp.Header.Get("WWW-Authenticate")+a.logs.String(), cred) {
		t.Fatal("the credential shows in an answer or the log")
	}
	// An unknown agent credential is refused too; a random token on a
	// server that takes anonymous callers is served anonymous, as before.
	other, _, _ := audit.NewAgentCredential()
	if resp, _ := a.post(t, other); resp.StatusCode != 401 {
		t.Fatalf("unknown agent credential: %d", resp.StatusCode)
	}
	if resp, body := a.post(t, "not-a-credential"); resp.StatusCode != 200 || !strings.Contains(body, "decision_id") {
		t.Fatalf("anonymous: %d %s", resp.StatusCode, body)
	}
}

func TestProtectedResourceMetadataServed(t *testing.T) {
	a := newAgentsServer(t, nil)
	for _, p := range []string{identity.WellKnownPath, identity.WellKnownPath + EndpointPath} {
		resp, err := http.Get(a.ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || m["resource"] != a.ts.URL+EndpointPath {
			t.Fatalf("%s: %d %v %v", p, resp.StatusCode, m, err)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, a.ts.URL+identity.WellKnownPath, nil)
	req.Host = "evil.example"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the Host check comes first: %v %v", resp, err)
	}
}

func TestOAuthAccessTokensOverHTTP(t *testing.T) {
	k := oauthtest.New(t)
	const iss, aud = "https://auth.example", "https://ewp.example/mcp"
	a := newAgentsServer(t, &identity.OAuth{JWKS: k.JWKSFile(t, t.TempDir()), Issuer: iss, Audience: aud, GroupsClaim: "groups"})
	claims := func(k string, v any) map[string]any {
		c := map[string]any{"iss": iss, "aud": aud, "sub": "carol", "exp": testNow.Add(time.Hour).Unix(), "groups": []string{"ops"}}
		c[k] = v
		return c
	}
	// With OAuth on, a credential is required: the client learns where.
	resp, _ := a.post(t, "")
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Bearer resource_metadata="`+a.ts.URL+identity.WellKnownPath+`/mcp"` {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	for name, tok := range map[string]string{
		"wrong issuer":   k.Sign(t, claims("iss", "https://evil.example")),
		"wrong audience": k.Sign(t, claims("aud", "https://other.example/mcp")),
		"expired":        k.Sign(t, claims("exp", testNow.Add(-time.Hour).Unix())),
		"other key":      oauthtest.New(t).Sign(t, claims("sub", "carol")),
		"not a token":    "nope",
	} {
		if resp, body := a.post(t, tok); resp.StatusCode != 401 || strings.Contains(body, tok) {
			t.Errorf("%s: %d %s", name, resp.StatusCode, body)
		}
	}
	c := a.dial(t, k.Sign(t, claims("sub", "carol")))
	id := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
	d, err := a.ml.Decision(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Agent != "carol" || !slices.Equal(d.AgentGroups, []string{"ops"}) || d.Caller.Credential != "oauth:carol" {
		t.Fatalf("decision agent %q groups %v caller %+v", d.Agent, d.AgentGroups, d.Caller)
	}
	// The ingest token and agent credentials still work beside OAuth.
	if resp, _ := a.post(t, testToken); resp.StatusCode != 200 {
		t.Fatalf("ingest token: %d", resp.StatusCode)
	}
	if resp, _ := a.post(t, a.addAgent(t, "dave")); resp.StatusCode != 200 {
		t.Fatalf("agent credential: %d", resp.StatusCode)
	}
}

func TestStdioServesItsAgent(t *testing.T) {
	srv, ml, _ := loggedServer(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(identity.WithPrincipal(context.Background(), audit.Principal{Name: "erin", Groups: []string{"ci"}}))
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, inR, outW, false); _ = outW.Close() }()
	t.Cleanup(func() { _ = inW.Close(); cancel(); <-done })
	c := start(t, client.NewClient(transport.NewIO(outR, inW, io.NopCloser(strings.NewReader("")))))
	id := decisionID(t, mustOK(t, call(t, c, "may_act", confirmArgs())))
	d, err := ml.Decision(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Agent != "erin" || !slices.Equal(d.AgentGroups, []string{"ci"}) || d.Caller.Credential != "agent:erin" || d.Caller.Transport != "stdio" {
		t.Fatalf("agent %q groups %v caller %+v", d.Agent, d.AgentGroups, d.Caller)
	}
	mustOK(t, readDecision(t, c, id))
	// An anonymous client's decision is not erin's to read.
	other := decisionID(t, mustOK(t, call(t, dialInProcess(t, srv), "may_act", confirmArgs())))
	if d, _ := ml.Decision(context.Background(), other); d.Agent != "" || d.Caller.Credential != "none" {
		t.Fatalf("an anonymous call records no agent: %q %+v", d.Agent, d.Caller)
	}
	mustRefuse(t, readDecision(t, c, other), CodeUnknownDecision)
}
