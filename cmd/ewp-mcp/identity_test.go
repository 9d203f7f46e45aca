package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	auditsqlite "github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/internal/syncbuf"
)

func TestIdentityFlagsRefused(t *testing.T) {
	db := ledgerFile(t)
	jwks := filepath.Join(t.TempDir(), "jwks.json")
	_ = os.WriteFile(jwks, []byte(`{"keys":[]}`), 0o600)
	h := []string{"--db", db, "--http", "127.0.0.1:0"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--db", db, "--agent", "a", "--http", ":0"}, "--agent is for stdio"},
		{[]string{"--db", db, "--agent", "a", "--audit", "off"}, "needs the decision log"},
		{[]string{"--db", db, "--jwks", jwks, "--issuer", "i", "--audience", "a"}, "are for --http"},
		{[]string{"--db", db, "--require-credential"}, "are for --http"},
		{append(h, "--issuer", "i"), "give --jwks"},
		{append(h, "--groups-claim", "g"), "give --jwks"},
		{append(h, "--jwks", jwks, "--issuer", "i"), "--jwks needs --issuer"},
		{append(h, "--jwks", "/nonexistent/jwks.json", "--issuer", "i", "--audience", "a"), "cannot read it"},
	}
	for _, tc := range cases {
		r := runWith(t, tc.args, env(), "")
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: code %d, stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// agentLog makes a decision log beside db holding the agents named, and
// revokes those in revoked; it returns the log's path and the agents'
// credentials.
func agentLog(t *testing.T, db string, names []string, revoked ...string) (string, map[string]string) {
	t.Helper()
	path := db + ".audit"
	l, err := auditsqlite.OpenOrCreate(path, auditsqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	creds := map[string]string{}
	for _, n := range names {
		cred, sum, _ := audit.NewAgentCredential()
		creds[n] = cred
		if err := l.AddAgent(ctx, &audit.AgentRecord{Name: n, Groups: []string{"ops"}, CredentialSHA256: sum}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range revoked {
		if err := l.RevokeAgent(ctx, n, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return path, creds
}

func TestStdioAgent(t *testing.T) {
	db := ledgerFile(t)
	logPath, _ := agentLog(t, db, []string{"alice", "bob"}, "bob")
	for name, want := range map[string]string{"bob": "was revoked", "carol": "not in the register"} {
		r := runWith(t, []string{"--db", db, "--agent", name}, env(), "")
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("--agent %s: %d %q", name, r.code, r.stderr)
		}
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"may_act","arguments":{"proposition_id":"P","action":{"action_id":"a","kind":"deploy","risk":"low","reversible":true}}}}`,
	}, "\n") + "\n"
	r := runWith(t, []string{"--db", db, "--agent", "alice"}, env(), in)
	if r.code != 0 || !strings.Contains(r.stderr, "agent=alice") {
		t.Fatalf("%d %s", r.code, r.stderr)
	}
	l, err := auditsqlite.Open(logPath, auditsqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	all, err := l.List(context.Background(), audit.Filter{})
	if err != nil || len(all) != 1 {
		t.Fatalf("%d decisions, %v; stdout %s", len(all), err, r.stdout)
	}
	if d := all[0]; d.Agent != "alice" || len(d.AgentGroups) != 1 || d.Caller.Credential != "agent:alice" {
		t.Fatalf("decision agent %q groups %v caller %+v", d.Agent, d.AgentGroups, d.Caller)
	}
}

func TestHTTPServesMetadataAndChallenges(t *testing.T) {
	db := ledgerFile(t)
	logPath, creds := agentLog(t, db, []string{"alice"})
	o := &fakeOpener{store: &emptyStore{}}
	var out, errb syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"--db", db, "--http", "127.0.0.1:0", "--require-credential"}, env(), strings.NewReader(""), &out, &errb, o.open)
	}()
	url := waitForURL(t, &errb)
	base := strings.TrimSuffix(url, "/mcp")
	resp, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"resource":"`+url+`"`) {
		t.Fatalf("metadata: %d %s", resp.StatusCode, body)
	}
	post := func(token string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp = post("")
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("no credential: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp := post(creds["alice"]); resp.StatusCode != 200 {
		t.Fatalf("alice's credential: %d", resp.StatusCode)
	}
	// Revoked through another connection to the log, as ewp-audit agents
	// revoke does: the server's next lookup finds it.
	l, err := auditsqlite.Open(logPath, auditsqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RevokeAgent(context.Background(), "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if resp := post(creds["alice"]); resp.StatusCode != 401 {
		t.Fatalf("a revoked credential: %d", resp.StatusCode)
	}
	if strings.Contains(errb.String(), creds["alice"]) {
		t.Fatal("the credential is in the server's log")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("no shutdown")
	}
}

// TestStdioAgentRevokedWhileServing: an agent revoked after its stdio
// server started is refused on its next request; the server keeps
// running and says why.
func TestStdioAgentRevokedWhileServing(t *testing.T) {
	db := ledgerFile(t)
	logPath, _ := agentLog(t, db, []string{"alice"})
	inR, inW := io.Pipe()
	var out, errb syncbuf.Buffer
	done := make(chan int, 1)
	o := &fakeOpener{store: &emptyStore{}}
	go func() {
		done <- run(context.Background(), []string{"--db", db, "--agent", "alice"}, env(), inR, &out, &errb, o.open)
	}()
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// answered waits for the answer to id, one line of out.
	answered := func(id string) string {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.Contains(l, `"id":`+id+`,`) || strings.Contains(l, `"id":`+id+`}`) {
					return l
				}
			}
		}
		t.Fatalf("no answer to %s; stdout %s; stderr %s", id, out.String(), errb.String())
		return ""
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if a := answered("2"); !strings.Contains(a, `"may_act"`) {
		t.Fatalf("tools/list before the revocation: %s", a)
	}
	l, err := auditsqlite.OpenOrCreate(logPath, auditsqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RevokeAgent(context.Background(), "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"may_act","arguments":{"proposition_id":"P","action":{"action_id":"a","kind":"deploy","risk":"low","reversible":true}}}}`)
	if a := answered("3"); !strings.Contains(a, `"error":{"code":-32600`) || !strings.Contains(a, "EWP_REFUSE_AGENT_REVOKED") ||
		!strings.Contains(a, `agent \"alice\" was revoked`) {
		t.Fatalf("a call after the revocation: %s", a)
	}
	_ = inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	r, err := auditsqlite.Open(logPath, auditsqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if all, err := r.List(context.Background(), audit.Filter{}); err != nil || len(all) != 0 {
		t.Fatalf("the refused call was judged: %d decisions, %v", len(all), err)
	}
}
