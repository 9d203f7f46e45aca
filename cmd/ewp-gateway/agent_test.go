package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	auditsqlite "github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/internal/syncbuf"
)

// TestStdioAgentRevokedWhileServing: a stdio gateway started for one
// agent judges its calls as that agent, and refuses the next call once
// the operator revoked it, on record and naming why, while it keeps
// serving.
func TestStdioAgentRevokedWhileServing(t *testing.T) {
	_, config := echoWorld(t)
	logPath := filepath.Join(filepath.Dir(config), "ewp.sqlite") + ".audit"
	l, err := auditsqlite.OpenOrCreate(logPath, auditsqlite.Options{})
	must(t, err)
	_, sum, _ := audit.NewAgentCredential()
	must(t, l.AddAgent(context.Background(), &audit.AgentRecord{Name: "alice", Groups: []string{"ops"}, CredentialSHA256: sum}))
	must(t, l.Close())

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--config", config, "--agent", "alice"}, inR, outW, &errb)
		_ = outW.Close()
	}()
	answers := bufio.NewScanner(outR)
	answers.Buffer(nil, 1<<20)
	ask := func(id int, method, params string) map[string]any {
		t.Helper()
		msg := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":` + params + "}\n"
		if _, err := io.WriteString(inW, msg); err != nil {
			t.Fatal(err)
		}
		for answers.Scan() {
			var m map[string]any
			if json.Unmarshal(answers.Bytes(), &m) == nil && m["id"] == float64(id) {
				return m
			}
		}
		t.Fatalf("no answer to %d: %v; stderr %s", id, answers.Err(), errb.String())
		return nil
	}
	ask(1, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}`)
	_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	call := `{"name":"echo__echo","arguments":{"text":"hi"}}`
	if a := resultText(ask(2, "tools/call", call)); !strings.Contains(a, "hi") {
		t.Fatalf("before the revocation: %s", a)
	}
	l, err = auditsqlite.OpenOrCreate(logPath, auditsqlite.Options{})
	must(t, err)
	must(t, l.RevokeAgent(context.Background(), "alice", time.Now()))
	must(t, l.Close())
	if a := resultText(ask(3, "tools/call", call)); !strings.Contains(a, "EWP_REFUSE_AGENT_REVOKED") || !strings.Contains(a, `agent \"alice\" was revoked`) {
		t.Fatalf("after the revocation: %s", a)
	}
	_ = inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	r, err := auditsqlite.Open(logPath, auditsqlite.Options{ReadOnly: true})
	must(t, err)
	defer r.Close()
	all, err := r.List(context.Background(), audit.Filter{})
	must(t, err)
	if len(all) != 2 || all[0].Agent != "alice" || all[1].Agent != "alice" || all[0].Outcome != audit.OutcomeMayAct || all[1].Outcome == audit.OutcomeMayAct {
		t.Fatalf("decisions: %+v", all)
	}
}

// resultText is a tools/call answer's content text and error flag, as one string.
func resultText(m map[string]any) string {
	b, _ := json.Marshal(m["result"])
	return string(b)
}
