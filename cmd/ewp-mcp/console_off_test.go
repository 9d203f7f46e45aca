package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger/sqlite"
)

// Without an operator token, /console/ says the console is off and how to
// turn it on (not only where the MCP endpoint is), and so does the
// startup log.
func TestConsoleOffSaysHowToTurnItOn(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ewp.sqlite")
	if err := fillDemo(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	base, logs := serveInProcess(t, []string{"--db", db, "--http", "127.0.0.1:0", "--audit", "off"}, env())
	for _, path := range []string{"/console", "/console/", "/console/inbox"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
		for _, want := range []string{"operator console is off", "EWP_OPERATOR_TOKEN", "--operator-token-file", "--console-key"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("GET %s lacks %q: %s", path, want, body)
			}
		}
	}
	if !strings.Contains(logs.String(), "operator console is off") || !strings.Contains(logs.String(), "EWP_OPERATOR_TOKEN") {
		t.Errorf("the startup log does not say the console is off: %s", logs.String())
	}
	// --demo makes its own console key: the token alone turns it on.
	_, demoLogs := serveInProcess(t, []string{"--demo", "--http", "127.0.0.1:0"}, env())
	if !strings.Contains(demoLogs.String(), "operator console is off") || strings.Contains(demoLogs.String(), "--console-key FILE") {
		t.Errorf("--demo's hint: %s", demoLogs.String())
	}
	// Other unknown paths still answer as before.
	if c := get(t, base+"/elsewhere", ""); c != http.StatusNotFound {
		t.Errorf("/elsewhere: %d", c)
	}
}

// A guard over a ledger with no concept graph says it guards nothing and
// how to load a graph, instead of "ready".
func TestGuardOverNoGraphSaysItGuardsNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ewp.sqlite")
	l, err := sqlite.Create(db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	_, logs := serveInProcess(t, []string{"--db", db, "--http", "127.0.0.1:0", "--audit", "off"}, env())
	out := logs.String()
	if strings.Contains(out, "grounding guard ready") {
		t.Errorf("an empty graph is announced as ready: %s", out)
	}
	for _, want := range []string{"level=WARN", "guards nothing", "ewp-ingest --db " + db + " GRAPH.json", "fixtures/graphs/filesystem-demo.json"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q: %s", want, out)
		}
	}
}
