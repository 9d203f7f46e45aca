package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsageErrorsSayWhatToDo(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--config FILE is required"},
		{[]string{"--config", "x.json", "extra"}, `unexpected argument "extra"`},
		{[]string{"--nope"}, "ewp-gateway --help says how to use it"},
		{[]string{"--config", "x.json", "--max-request-bytes", "10"}, "at least 1024"},
		{[]string{"pin", "--config", "x.json", "--http", ":0"}, "pin takes --config only"},
		{[]string{"--config", "x.json", "--jwks", "k.json", "--issuer", "i", "--audience", "a"}, "are for --http"},
		{[]string{"--config", "x.json", "--http", ":0", "--issuer", "i"}, "give --jwks FILE|URL too"},
		{[]string{"--config", "x.json", "--http", ":0", "--jwks", "k.json", "--issuer", "i"}, "--jwks needs --issuer"},
		{[]string{"--config", "x.json", "--http", ":0", "--jwks", "/nonexistent/k.json", "--issuer", "i", "--audience", "a"}, "cannot read it"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), c.args, strings.NewReader(""), &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		if !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, errb.String(), c.want)
		}
	}
}

func TestHelpTeachesTheCallPath(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, nil, &out, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"SERVER__TOOL", "BEFORE anything is forwarded", "ewp/decision_id",
		"approve --once", "ewp-gateway pin", "ewp-audit --db LEDGER export", "--max-request-bytes"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "gw.json")
	must(t, os.WriteFile(p, []byte(`{"db":"l.sqlite","servers":{"a__b":{"command":"x"}}}`), 0o644))
	var errb bytes.Buffer
	if code := run(context.Background(), []string{"--config", p}, strings.NewReader(""), io.Discard, &errb); code != 1 {
		t.Fatalf("exit %d, want 1 (%s)", code, errb.String())
	}
	if !strings.Contains(errb.String(), "/servers") {
		t.Errorf("stderr %q does not name the field", errb.String())
	}
}

// echoWorld is a gateway in front of the Go echo server only: no npm.
func echoWorld(t *testing.T) (bin, config string) {
	t.Helper()
	bin = bins(t)
	dir := t.TempDir()
	root, _ := filepath.Abs("../..")
	ledger := filepath.Join(dir, "ewp.sqlite")
	runProg(t, filepath.Join(bin, "ewp-ingest"), "--db", ledger, "--quiet", "--attest-trusted-origins",
		filepath.Join(root, "fixtures/examples/quickstart.json"))
	config = filepath.Join(dir, "gw.json")
	writeJSON(t, config, map[string]any{
		"db": ledger, "pin_on_first_sight": true,
		"servers": map[string]any{"echo": map[string]any{"command": filepath.Join(bin, "mcpecho")}},
		"tools":   []any{map[string]any{"match": "echo/echo", "kind": "read", "risk": "low", "reversible": true}},
	})
	return bin, config
}

// The HTTP front has ewp-mcp's guards: Host and Origin must name the
// gateway (403), a body over the limit is 413 whether it is sent with a
// Content-Length or chunked, and a plain JSON POST is served.
func TestHTTPHostOriginAndBodyLimit(t *testing.T) {
	bin, config := echoWorld(t)
	u := httpGateway(t, bin, config, "--max-request-bytes", "2048")
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo__echo","arguments":{"text":"hi"}}}`
	post := func(mod func(*http.Request), body io.Reader) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, u, body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if mod != nil {
			mod(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(nil, strings.NewReader(call)); code != 200 || !strings.Contains(body, `"text":"hi"`) || !strings.Contains(body, "ewp/decision_id") {
		t.Errorf("plain call: %d %s", code, body)
	}
	if code, _ := post(func(r *http.Request) { r.Host = "evil.example" }, strings.NewReader(call)); code != 403 {
		t.Errorf("foreign Host: %d, want 403", code)
	}
	if code, _ := post(func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, strings.NewReader(call)); code != 403 {
		t.Errorf("foreign Origin: %d, want 403", code)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo__echo","arguments":{"text":"` + strings.Repeat("x", 4096) + `"}}}`
	if code, body := post(nil, strings.NewReader(big)); code != 413 || !strings.Contains(body, "--max-request-bytes") {
		t.Errorf("large body: %d %s, want 413 naming the flag", code, body)
	}
	// io.MultiReader hides the length: the request goes chunked.
	if code, _ := post(nil, io.MultiReader(strings.NewReader(big))); code != 413 {
		t.Errorf("large chunked body: %d, want 413", code)
	}
}

// With --require-credential a request without a valid agent credential
// gets 401 and the challenge naming the resource metadata, which is
// served; without it, no credential is anonymous and a bad one still 401.
func TestHTTPCredentials(t *testing.T) {
	bin, config := echoWorld(t)
	post := func(u, token string) (code int, challenge string) {
		t.Helper()
		code, _, challenge = postCall(t, u, token)
		return code, challenge
	}
	bad := "ewp_agent_" + strings.Repeat("A", 43)
	open := httpGateway(t, bin, config)
	if code, _ := post(open, ""); code != 200 {
		t.Errorf("no credential, not required: %d, want 200 (anonymous)", code)
	}
	if code, _ := post(open, bad); code != 401 {
		t.Errorf("unknown credential: %d, want 401", code)
	}
	closed := httpGateway(t, bin, config, "--require-credential")
	code, meta := post(closed, "")
	if code != 401 || !strings.Contains(meta, "resource_metadata=") {
		t.Fatalf("no credential, required: %d %q, want 401 naming the metadata", code, meta)
	}
	meta = meta[strings.Index(meta, "resource_metadata=")+len("resource_metadata="):]
	meta = strings.Trim(strings.SplitN(meta, ",", 2)[0], `"`)
	resp, err := http.Get(meta)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), closed) {
		t.Errorf("resource metadata at %s: %d %s, want it to name %s", meta, resp.StatusCode, b, closed)
	}
}

// pin reports a server it cannot reach, leaves that server's pins as they
// were and exits 1.
func TestPinReportsAServerItCannotReach(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "gw.json")
	must(t, os.WriteFile(p, []byte(`{"db":"l.sqlite","servers":{"gone":{"command":"/nonexistent/server"}}}`), 0o644))
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"pin", "--config", p}, nil, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "not reached: server gone") || !strings.Contains(errb.String(), "could not be reached") {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "gw.pins.json")); err == nil {
		t.Error("a pins file was written with nothing pinned")
	}
}

// ewp-gateway --http also serves the client hook endpoints over the same
// gate and manifest: a tool call the manifest permits is MAY_ACT, one no
// rule matches is refused, each under a decision.
func TestHTTPServesTheHookEndpoints(t *testing.T) {
	bin, config := echoWorld(t)
	u := httpGateway(t, bin, config)
	base := strings.TrimSuffix(u, "/mcp")
	post := func(body string) string {
		t.Helper()
		resp, err := http.Post(base+"/hooks/tool-call", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := post(`{"tool":"echo/echo","arguments":{"text":"hi"}}`); !strings.Contains(got, `"decision":"MAY_ACT"`) || !strings.Contains(got, `"decision_id"`) {
		t.Errorf("permitted call: %s", got)
	}
	if got := post(`{"tool":"other/rm","arguments":{}}`); !strings.Contains(got, `"decision":"DENY"`) {
		t.Errorf("a call no rule matches: %s", got)
	}
}

// With "audit": "off" the hook endpoints still judge a client's calls:
// the key a hook makes from the client's session and call id is not sent
// to a gate that keeps no log (which refuses a key: the hook answered 500).
func TestHookEndpointsWithoutADecisionLog(t *testing.T) {
	bin, config := echoWorld(t)
	var cfg map[string]any
	raw, err := os.ReadFile(config)
	must(t, err)
	must(t, json.Unmarshal(raw, &cfg))
	cfg["audit"] = "off"
	writeJSON(t, config, cfg)
	base := strings.TrimSuffix(httpGateway(t, bin, config), "/mcp")
	resp, err := http.Post(base+"/hooks/tool-call", "application/json",
		strings.NewReader(`{"event":"before","session":"s1","call_id":"c1","tool":"echo/echo","arguments":{"text":"hi"}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"decision":"MAY_ACT"`) || strings.Contains(string(b), "--audit off") {
		t.Errorf("a permitted call without a log: %d %s", resp.StatusCode, b)
	}
}
