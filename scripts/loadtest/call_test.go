package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	auditsqlite "github.com/ewp-go/ewp/audit/sqlite"
)

// appendMayActCall must send exactly the warrant-only may_act call the
// load test describes, for any id and proposition number.
func TestAppendMayActCall(t *testing.T) {
	for _, c := range [][2]int{{0, 0}, {1, 42}, {123456, 99_999}, {7, 1_234_567}} {
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"may_act",`+
			`"arguments":{"proposition_id":"P-%07d","action":{"action_id":"a","kind":"deploy","risk":"medium","reversible":true}}}}`, c[0], c[1])
		got := call{tool: toolMayAct}.append(nil, c[0], c[1])
		if string(got) != want || !json.Valid(got) {
			t.Errorf("may_act call(%d, %d) = %s, want %s", c[0], c[1], got, want)
		}
	}
	if got, want := (call{tool: toolWarrantNow}).append(nil, 3, 4), appendCall(nil, 3, 4); !bytes.Equal(got, want) {
		t.Errorf("warrant_now call = %s, want %s", got, want)
	}
}

// inProcessLauncher serves a ledger of three synthetic propositions from
// this process, as -inprocess does.
func inProcessLauncher(t *testing.T) *launcher {
	t.Helper()
	ln, err := newLauncher(config{props: 3, dir: t.TempDir(), inprocess: true, tool: toolMayAct})
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// ask sends one may_act call about prop to a server started with the log
// on or off, and returns the answer.
func ask(t *testing.T, ln *launcher, logged bool, prop int) (int, []byte) {
	t.Helper()
	srv, err := ln.start(logged)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	p, err := newRawPoster(srv.url, false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	var resp bytes.Buffer
	status, err := p.post(call{tool: toolMayAct}.append(nil, 1, prop), &resp)
	if err != nil {
		t.Fatal(err)
	}
	return status, resp.Bytes()
}

// The real server answers the load's may_act call MAY_ACT, with a
// decision_id exactly when it keeps a decision log, and the check accepts
// that answer only from a server run the way it was told.
func TestMayActAnswerChecked(t *testing.T) {
	ln := inProcessLauncher(t)
	for _, logged := range []bool{true, false} {
		status, body := ask(t, ln, logged, 2)
		for _, full := range []bool{true, false} {
			if err := (call{toolMayAct, logged}).check(status, body, 2, full); err != nil {
				t.Errorf("log %s, full %v: the real answer is rejected: %v", onOff(logged), full, err)
			}
			if err := (call{toolMayAct, !logged}).check(status, body, 2, full); err == nil {
				t.Errorf("log %s, full %v: the answer is accepted as one from a server with the log %s: %s",
					onOff(logged), full, onOff(!logged), body)
			}
		}
		if err := (call{toolMayAct, logged}).check(status, body, 1, true); err == nil {
			t.Errorf("log %s: an answer about P-0000002 is accepted as one about P-0000001", onOff(logged))
		}
	}
	if err := ln.ledgerUnchanged(); err != nil {
		t.Error(err)
	}
}

var decisionIDKV = regexp.MustCompile(`"decision_id":"[^"]*",?`)

// Answers that are not a recorded MAY_ACT are rejected, quickly checked
// or fully decoded: without decision_id though the log is on, with
// another decision at the top or in a layer, a tool error, an HTTP error.
func TestMayActAnswerRejected(t *testing.T) {
	ln := inProcessLauncher(t)
	status, good := ask(t, ln, true, 0)
	if !decisionIDKV.Match(good) {
		t.Fatalf("the answer has no decision_id: %s", good)
	}
	bad := map[string][]byte{
		"no decision_id":           decisionIDKV.ReplaceAll(good, nil),
		"empty decision_id":        decisionIDKV.ReplaceAll(good, []byte(`"decision_id":"",`)),
		"REQUIRE_CONFIRMATION":     bytes.ReplaceAll(good, mayActDecision, []byte(`"decision":"REQUIRE_CONFIRMATION"`)),
		"DENY, the layer MAY_ACT":  bytes.Replace(good, mayActDecision, []byte(`"decision":"DENY"`), 1),
		"a layer says DENY":        replaceLast(good, mayActDecision, []byte(`"decision":"DENY"`)),
		"tool error":               []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{}"}],"isError":true}}`),
		"MAY_ACT only in the text": []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"decision\":\"MAY_ACT\",\"decision_id\":\"x\"}"}]}}`),
	}
	for name, body := range bad {
		for _, full := range []bool{true, false} {
			if err := (call{toolMayAct, true}).check(status, body, 0, full); err == nil {
				t.Errorf("%s (full %v): accepted: %s", name, full, body)
			}
		}
	}
	if err := (call{toolMayAct, true}).check(500, good, 0, false); err == nil {
		t.Error("an HTTP 500 is accepted")
	}
}

// Each server with the log on starts from an empty log, whatever an
// earlier run left beside the ledger, and none writes the ledger.
func TestDecisionLogStartsEmpty(t *testing.T) {
	ln := inProcessLauncher(t)
	logPath := auditsqlite.DefaultPath(ln.db)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.WriteFile(logPath+suffix, []byte("an earlier run's log"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if status, body := ask(t, ln, true, 1); (call{toolMayAct, true}).check(status, body, 1, true) != nil {
			t.Fatalf("over a stale log: %d %s", status, body)
		}
		l, err := auditsqlite.Open(logPath, auditsqlite.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := l.Verify(t.Context())
		l.Close()
		if err != nil || !rep.OK() || rep.Decisions != 1 {
			t.Errorf("the log holds %+v (err %v), want the one decision of this server", rep, err)
		}
	}
	if err := ln.ledgerUnchanged(); err != nil {
		t.Error(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(ln.db, later, later); err != nil {
		t.Fatal(err)
	}
	if err := ln.ledgerUnchanged(); err == nil {
		t.Error("a ledger modified during the run went unnoticed")
	}
}

// replaceLast replaces the last old in b with new.
func replaceLast(b, old, new []byte) []byte {
	i := bytes.LastIndex(b, old)
	return append(append(append([]byte{}, b[:i]...), new...), b[i+len(old):]...)
}
