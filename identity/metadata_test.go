package identity

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestProtectedResourceMetadata(t *testing.T) {
	is := newIssuer(t)
	a := newAuth(t, Config{OAuth: is.oauth(is.file()), Resource: "http://127.0.0.1:8765/mcp"})
	for _, path := range []string{WellKnownPath, WellKnownPath + "/mcp"} {
		if !a.IsMetadataPath(path) {
			t.Fatalf("%s is not served", path)
		}
		w := httptest.NewRecorder()
		a.ServeMetadata(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %v", path, w.Code, w.Header())
		}
		var m map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["resource"] != "http://127.0.0.1:8765/mcp" || len(m["authorization_servers"].([]any)) != 1 ||
			m["authorization_servers"].([]any)[0] != testIssuer || m["bearer_methods_supported"].([]any)[0] != "header" {
			t.Fatalf("%s: %v", path, m)
		}
	}
	if a.IsMetadataPath("/.well-known/oauth-authorization-server") || a.IsMetadataPath("/mcp") {
		t.Fatal("other paths are not the document")
	}
	w := httptest.NewRecorder()
	a.ServeMetadata(w, httptest.NewRequest(http.MethodPost, WellKnownPath, nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", w.Code)
	}
	if got := a.MetadataURL(); got != "http://127.0.0.1:8765"+WellKnownPath+"/mcp" {
		t.Fatalf("metadata URL %q", got)
	}
	// Without OAuth the document names no authorization server.
	plain := newAuth(t, Config{Resource: "https://ewp.example/mcp"})
	w = httptest.NewRecorder()
	plain.ServeMetadata(w, httptest.NewRequest(http.MethodGet, WellKnownPath, nil))
	if strings.Contains(w.Body.String(), "authorization_servers") || !strings.Contains(w.Body.String(), `"resource":"https://ewp.example/mcp"`) {
		t.Fatalf("%s", w.Body)
	}
	for _, bad := range []string{"ftp://x/mcp", "/mcp", "http://u:p@x/mcp", "http://x/mcp?t=1"} {
		if _, err := New(context.Background(), Config{Resource: bad}); err == nil {
			t.Errorf("resource %q accepted", bad)
		}
	}
}

func TestChallenge(t *testing.T) {
	a := newAuth(t, Config{Resource: "http://127.0.0.1:8765/mcp", Required: true})
	secret := "ewp_agent_" + strings.Repeat("A", 43)
	_, err := a.Authenticate(bearer(secret))
	w := httptest.NewRecorder()
	a.Challenge(w, err)
	want := `Bearer resource_metadata="http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description=`
	if w.Code != 401 || !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), want) {
		t.Fatalf("%d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	if strings.Contains(w.Body.String()+w.Header().Get("WWW-Authenticate"), secret) {
		t.Fatal("the answer repeats the token")
	}
	_, err = a.Authenticate(bearer(""))
	w = httptest.NewRecorder()
	a.Challenge(w, err)
	if got := w.Header().Get("WWW-Authenticate"); got != `Bearer resource_metadata="http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp"` {
		t.Fatalf("missing credential: %q", got)
	}
	w = httptest.NewRecorder()
	a.Challenge(w, &Error{Status: http.StatusServiceUnavailable, Reason: "down"})
	if w.Code != 503 || w.Header().Get("WWW-Authenticate") != "" {
		t.Fatalf("503: %d %v", w.Code, w.Header())
	}
	w = httptest.NewRecorder()
	a.Challenge(w, errors.New("other"))
	if w.Code != 401 {
		t.Fatalf("%d", w.Code)
	}
	if got := headerSafe("a\"b\\c\u00e9\n"); got != "a'b'c''" {
		t.Fatalf("%q", got)
	}
}

func TestWrap(t *testing.T) {
	reg := newFakeAgents()
	cred := reg.add(t, "alice", false, "ops")
	a := newAuth(t, Config{Agents: reg, Resource: "http://127.0.0.1:8765/hooks"})
	var seen Identity
	h := a.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, _ = IdentityFrom(r.Context())
		if p := PrincipalFrom(r.Context()); p.Name != seen.Principal.Name {
			t.Errorf("principal %q, identity %q", p.Name, seen.Principal.Name)
		}
		w.WriteHeader(204)
	}))
	for _, tc := range []struct {
		path, token string
		code        int
		who         string
	}{
		{"/hooks/claude-code", cred, 204, "alice"},
		{"/hooks/claude-code", "", 204, "anonymous"},
		{"/hooks/claude-code", "ewp_agent_" + strings.Repeat("A", 43), 401, ""},
		{WellKnownPath + "/hooks", "", 200, ""},
	} {
		seen = Identity{}
		r := httptest.NewRequest(http.MethodGet, tc.path, nil)
		if tc.token != "" {
			r.Header.Set("Authorization", "Bearer "+tc.token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.code || seen.Principal.Name != tc.who {
			t.Errorf("%s %q: %d %q", tc.path, tc.token, w.Code, seen.Principal.Name)
		}
	}
	if _, ok := IdentityFrom(context.Background()); ok {
		t.Error("an identity without Wrap")
	}
}
