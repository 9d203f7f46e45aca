package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/syncbuf"
)

// demoBin builds ewp-mcp and ewp-audit into one directory, as a newcomer
// has them after the README's build, and returns it.
func demoBin(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for pkg, name := range map[string]string{".": "ewp-mcp", "../ewp-audit": "ewp-audit"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg).CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", name, err, out)
		}
	}
	return bin
}

// shell runs one printed command line with sh, with bin first on PATH and
// the extra environment; it returns standard output.
func shell(t *testing.T, bin, line string, extra ...string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Env = append(os.Environ(), append([]string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, extra...)...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("$ %s: %v\n%s%s", line, err, out, errb.String())
	}
	return string(out)
}

// demoHints starts line (ending in exec ewp-mcp --demo …) with sh and waits for
// its printed hints: it returns the commands (the "  $ " lines, in order),
// the whole output so far and the process's standard output lines.
func demoHints(t *testing.T, bin, line string) (cmds []string, printed string, stdout *bufio.Scanner, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	errb := &syncbuf.Buffer{}
	cmd.Stderr = errb
	// Stopped as Ctrl-C stops it, so it deletes its temporary directory.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop = func() { cancel(); _ = cmd.Wait() }
	t.Cleanup(stop)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errb.String(), "Try next") || !strings.HasSuffix(errb.String(), "\n\n") {
		if time.Now().After(deadline) {
			t.Fatalf("no hints after 30 s:\n%s", errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	printed = errb.String()
	for _, l := range strings.Split(printed, "\n") {
		if c, ok := strings.CutPrefix(l, "  $ "); ok {
			cmds = append(cmds, c)
		}
	}
	return cmds, printed, bufio.NewScanner(out), stop
}

// pick is the one command of cmds that starts with prefix.
func pick(t *testing.T, cmds []string, prefix string) string {
	t.Helper()
	for _, c := range cmds {
		if strings.HasPrefix(c, prefix) {
			return c
		}
	}
	t.Fatalf("no printed command starts with %q: %q", prefix, cmds)
	return ""
}

// structured is a curl answer's structuredContent.
func structured(t *testing.T, body string) map[string]any {
	t.Helper()
	var m struct {
		Result struct {
			Structured map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Result.Structured == nil {
		t.Fatalf("not a tool answer: %s", body)
	}
	return m.Result.Structured
}

var (
	waitingRE  = regexp.MustCompile(`decision ([0-9a-f-]{36}) waits for you`)
	approvedRE = regexp.MustCompile(`"approval_id": "([0-9a-f-]{36})"`)
	consoleRE  = regexp.MustCompile(`the console: open (http://\S+/console/)`)
)

// TestDemoHintsReachAnApproval is issue 23's first hour: the demo as the
// README runs it, then its printed hints followed as printed (run by sh,
// with only the binaries on PATH): ewp-audit lists the waiting decision
// and approves it with the demo's key, decision_get tells the agent it is
// approved, and the agent's retry with the approval passes. Then the
// console's hint: the demo restarted with an operator token shows the
// waiting decision in its title and inbox, approves it there, and the
// retry passes again.
func TestDemoHintsReachAnApproval(t *testing.T) {
	bin := demoBin(t)
	cmds, printed, _, stopFirst := demoHints(t, bin, "exec ewp-mcp --demo --http 127.0.0.1:0")
	m := waitingRE.FindStringSubmatch(printed)
	if m == nil {
		t.Fatalf("the demo names no waiting decision:\n%s", printed)
	}
	waiting := m[1]
	if list := shell(t, bin, pick(t, cmds, "ewp-audit list --pending")); !strings.Contains(list, waiting) || !strings.Contains(list, "pending") {
		t.Fatalf("ewp-audit list --pending does not show %s:\n%s", waiting, list)
	}
	status := pick(t, cmds, "curl") // the first curl is the retry; decision_get's names decision_get
	for _, c := range cmds {
		if strings.HasPrefix(c, "curl") && strings.Contains(c, "decision_get") {
			status = c
		}
	}
	if s := structured(t, shell(t, bin, status)); s["status"] != "pending" {
		t.Fatalf("decision_get before the answer: %v", s)
	}
	approved := approvedRE.FindStringSubmatch(shell(t, bin, pick(t, cmds, "ewp-audit approve "+waiting)))
	if approved == nil {
		t.Fatal("ewp-audit approve printed no approval_id")
	}
	if s := structured(t, shell(t, bin, status)); s["status"] != "approved" || s["approval_id"] != approved[1] {
		t.Fatalf("decision_get after the approval: %v", s)
	}
	retry := strings.Replace(pick(t, cmds, "curl"), "APPROVAL_ID", approved[1], 1)
	if out := structured(t, shell(t, bin, retry)); out["decision"] != "MAY_ACT" {
		t.Fatalf("the agent's retry with the approval: %v", out)
	}

	// The story's other half: P-backup-restores's warrant changed over time
	// (a drill made it CURRENT, then it went STALE), on its second snapshot.
	mcpURL := regexp.MustCompile(`curl -s (\S+/mcp) `).FindStringSubmatch(retry)[1]
	for at, want := range map[string]string{"2026-10-01T12:00:00Z": "CURRENT", "2026-11-28T12:00:00Z": "STALE"} {
		b, err := post(mcpURL, callBody(1, "warrant_now", map[string]any{"proposition_id": "P-backup-restores", "evaluated_at": at}))
		if err != nil {
			t.Fatal(err)
		}
		_, r := decodeReply(t, b)
		w, _ := r.out["warrant"].(map[string]any)
		if w["currency"] != want || r.out["view_id"] == "example-backup-1" {
			t.Errorf("P-backup-restores at %s: %v, want %s on the drill's snapshot", at, r.out, want)
		}
	}

	// The console's hint: an operator token, and the demo again.
	restart := pick(t, cmds, "ewp-mcp --demo")
	token := pick(t, cmds, "export EWP_OPERATOR_TOKEN")
	stopFirst() // frees the port the hint names
	cmds2, printed2, stdout, _ := demoHints(t, bin, token+"; exec "+restart)
	if !stdout.Scan() {
		t.Fatal("the token line printed nothing")
	}
	tok := strings.TrimSpace(stdout.Text())
	cm := consoleRE.FindStringSubmatch(printed2)
	w2 := waitingRE.FindStringSubmatch(printed2)
	if cm == nil || w2 == nil {
		t.Fatalf("no console URL or waiting decision in the second demo's hints:\n%s", printed2)
	}
	base := strings.TrimSuffix(cm[1], "/console/")
	c := signedIn(t, base, tok)
	inbox := fetch(t, c, base+"/console/inbox")
	if !strings.Contains(inbox, w2[1]) || !strings.Contains(inbox, "<title>(1) ") {
		t.Fatalf("the inbox does not show the waiting decision %s with (1) in its title", w2[1])
	}
	csrf := csrfRE.FindStringSubmatch(inbox)
	resp, err := c.PostForm(base+"/console/approve", url.Values{"csrf": {csrf[1]}, "decision_id": {w2[1]}, "verdict": {"once"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	status2 := ""
	for _, c := range cmds2 {
		if strings.HasPrefix(c, "curl") && strings.Contains(c, "decision_get") {
			status2 = c
		}
	}
	s := structured(t, shell(t, bin, status2))
	ap, _ := s["approval_id"].(string)
	if s["status"] != "approved" || ap == "" {
		t.Fatalf("decision_get after the console's approval: %v", s)
	}
	if out := structured(t, shell(t, bin, strings.Replace(pick(t, cmds2, "curl"), "APPROVAL_ID", ap, 1))); out["decision"] != "MAY_ACT" {
		t.Fatalf("the retry with the console's approval: %v", out)
	}
	if !strings.Contains(fetch(t, c, base+"/console/inbox"), "<title>Inbox") {
		t.Error("the title still counts a pending decision after the answer")
	}
}

// TestDemoDirKeepsItsLog: over stdio (a client that starts the server
// itself), --demo-dir keeps the demo's ledger, decision log and key; a
// second start reuses them, so the decision that waited still waits and
// the printed approve line names it and the same files. Without
// --demo-dir the temporary directory is gone after exit.
func TestDemoDirKeepsItsLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	code, _, first := process(t, "", "--demo", "--demo-dir", dir)
	m := waitingRE.FindStringSubmatch(first)
	if code != 0 || m == nil || !strings.Contains(first, "built in "+dir) {
		t.Fatalf("first start: exit %d\n%s", code, first)
	}
	approve := "ewp-audit approve " + m[1] + " --once --key " + filepath.Join(dir, "operator.key") + " --audit " + filepath.Join(dir, "demo.sqlite.audit")
	if !strings.Contains(first, "  $ "+approve+"\n") {
		t.Fatalf("no approve line %q in\n%s", approve, first)
	}
	code, _, second := process(t, "", "--demo", "--demo-dir", dir)
	if code != 0 || !strings.Contains(second, "reusing "+dir) || !strings.Contains(second, "  $ "+approve+"\n") {
		t.Fatalf("second start: exit %d\n%s", code, second)
	}
	code, _, temp := process(t, "", "--demo")
	built := regexp.MustCompile(`built in (\S+)`).FindStringSubmatch(temp)
	if code != 0 || built == nil {
		t.Fatalf("temporary demo: exit %d\n%s", code, temp)
	}
	if _, err := os.Stat(built[1]); !os.IsNotExist(err) {
		t.Errorf("the temporary demo directory %s outlived the demo: %v", built[1], err)
	}
	if r := runWith(t, []string{"--demo-dir", dir}, env(), ""); r.code != 2 || !strings.Contains(r.stderr, "give --demo too") {
		t.Errorf("--demo-dir alone: exit %d %q", r.code, r.stderr)
	}
}
