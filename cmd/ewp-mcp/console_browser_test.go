package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ewp-go/ewp/fixtures"
	"github.com/ewp-go/ewp/graphstore"
	"github.com/ewp-go/ewp/internal/syncbuf"
	"github.com/ewp-go/ewp/internal/testskip"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/warrant"
)

// chromium finds Debian's chromium (CI installs it with apt-get; no
// browser is ever downloaded). Without one the test skips, except under CI,
// where a missing browser must fail the build rather than pass it silently.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium binary on PATH; install Debian's chromium (apt-get install -y chromium) to run the browser test"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: .ci/run installs it)")
	}
	t.Skip(testskip.Message(testskip.Chromium, msg))
	return ""
}

func randomToken(t *testing.T, prefix string) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// consoleServer starts the real ewp-mcp process over HTTP on the demo
// evidence and concept graph, with the demo edge policies, the SQLite
// decision log beside the ledger, an ingest token and an operator token.
// It returns the MCP endpoint and the console's base URL.
func consoleServer(t *testing.T, operator, ingest string) (mcpURL, base string) {
	t.Helper()
	db := historyLedger(t)
	policies := writePolicies(t, string(fixtures.DemoPolicies))
	cmd := exec.Command(os.Args[0], "--db", db, "--policies", policies, "--http", "127.0.0.1:0",
		"--operator-keys", keysFile(t), "--console-key", opKey(t, "console"))
	cmd.Env = append(os.Environ(), "EWP_MCP_RUN_MAIN=1", "EWP_OPERATOR_TOKEN="+operator, "EWP_INGEST_TOKEN="+ingest)
	var errb syncbuf.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ewp-mcp did not shut down cleanly: %v\n%s", err, errb.String())
			}
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("ewp-mcp did not shut down within 15 s\n%s", errb.String())
		}
	})
	mcpURL = waitForURL(t, &errb)
	if _, err := os.Stat(db + ".audit"); err != nil {
		t.Fatalf("the SQLite decision log is not beside the ledger: %v", err)
	}
	return mcpURL, strings.TrimSuffix(mcpURL, "/mcp") + "/console/"
}

// historyLedger is the demo ledger (the embedded examples and concept
// graph) with a history: the examples stored 60 days ago, and 40 days ago
// a second snapshot of P-backup-restores with a fresh restore drill, which
// has since aged past its 30-day freshness policy. The proposition page
// then draws a warrant that changes over time, with the STALE crossing.
func historyLedger(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	clock := now.AddDate(0, 0, -60)
	path := filepath.Join(t.TempDir(), "ewp.sqlite")
	l, err := sqlite.Create(path, sqlite.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var env struct {
		Views []json.RawMessage `json:"views"`
	}
	if err := json.Unmarshal(fixtures.QuickstartViews, &env); err != nil {
		t.Fatal(err)
	}
	var views []*warrant.View
	var backup map[string]any
	for _, raw := range env.Views {
		v, err := warrant.DecodeView(raw)
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, v)
		if v.PropositionID == "P-backup-restores" {
			_ = json.Unmarshal(raw, &backup)
		}
	}
	if _, err := l.Put(ctx, views); err != nil {
		t.Fatal(err)
	}
	if _, err := graphstore.LoadDocument(ctx, l, fixtures.DemoGraph); err != nil {
		t.Fatal(err)
	}
	clock = now.AddDate(0, 0, -40)
	drill := clock.Add(-time.Hour).Format("2006-01-02T15:04:05Z")
	src := map[string]any{"source_id": "restore-drill-2", "lineage_id": "L-drill-2", "origin_type": "human",
		"origin_locator": "restore drill ticket OPS-5120", "snapshot_id": "restore-drill-2@1",
		"content_hash": "sha256:d1ce", "observed_at": drill}
	backup["view_id"] = "example-backup-2"
	backup["checks"] = append(backup["checks"].([]any), map[string]any{"check_id": "k-drill-2", "method": "human_attestation",
		"scope": "restore drill OPS-5120", "subjects": []string{"backup-nightly"}, "result": "supports",
		"observed_at": drill, "source": src})
	raw, _ := json.Marshal(backup)
	v, err := warrant.DecodeView(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Put(ctx, []*warrant.View{v}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConsoleApprovalAgainstTheServer is the console's loop of issue #14
// against the real ewp-mcp process: an agent's may_act is answered
// REQUIRE_CONFIRMATION; in chromium the operator is refused with a wrong
// token and with the agent's ingest token, signs in, opens every page, is
// refused a form without its CSRF token and a form from a foreign origin,
// and approves once from the inbox; the agent's next may_act with that
// approval_id is MAY_ACT with the approval layer, and the one after it is
// refused as used. With EWP_SCREENSHOTS=DIR each page is saved there.
func TestConsoleApprovalAgainstTheServer(t *testing.T) {
	exe := chromium(t)
	operator, ingest := randomToken(t, "operator-"), randomToken(t, "ingest-")
	mcpURL, base := consoleServer(t, operator, ingest)

	n := 0
	agent := func(tool string, args map[string]any) toolReply {
		t.Helper()
		n++
		resp, err := http.Post(mcpURL, "application/json", strings.NewReader(callBody(n, tool, args)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		_, r := decodeReply(t, body)
		return r
	}
	// The contradicted memory (TENTATIVE, conflict OPEN) at risk medium
	// needs a human.
	upgrade := map[string]any{"proposition_id": "P-db-major-version",
		"action": map[string]any{"action_id": "upgrade-libpq", "kind": "package_upgrade", "risk": "medium", "reversible": true}}
	first := agent("may_act", upgrade)
	pending, _ := first.out["decision_id"].(string)
	if first.out["decision"] != "REQUIRE_CONFIRMATION" || pending == "" {
		t.Fatalf("want REQUIRE_CONFIRMATION with a decision_id: %+v", first)
	}

	// More of the record for the pages to show: a grounding check, and a
	// delete the edge policies hold for confirmation.
	if r := agent("check_grounding", map[string]any{"concepts": []string{"delete", "file"}}); r.out["grounded"] != true {
		t.Fatalf("check_grounding: %+v", r)
	}
	if r := agent("may_act", protectedDelete()); r.out["decision"] != "REQUIRE_CONFIRMATION" {
		t.Fatalf("protected delete: %+v", r)
	}

	b := newBrowser(t, exe)
	// Refused: a wrong token, and the agent's own (ingest) token.
	b.run("open sign-in", chromedp.Navigate(base+"login"), chromedp.WaitVisible(chromedp.CSS("#token")))
	b.shot("login")
	for _, wrong := range []string{"not-the-operator-token", ingest} {
		b.signIn(base, wrong, ".message")
		if s := b.text(); !strings.Contains(s, "Wrong operator token") {
			t.Fatalf("sign-in with a wrong token: page says %q", s)
		}
	}
	b.run("overview signed out", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#token")))

	b.signIn(base, operator, "nav")
	if s := b.text(); !strings.Contains(s, "Propositions by state") || !strings.Contains(s, "Signed in as Ada Operator") {
		t.Fatalf("after sign in: %q", s)
	}
	// The overview's counts and the list come from the background state
	// summary, ready moments after the start: wait for it.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(b.text(), "4 propositions, as of"); {
		if time.Now().After(deadline) {
			t.Fatalf("the state summary was not ready within 10 s: %q", b.text())
		}
		time.Sleep(100 * time.Millisecond)
		b.run("reload the overview", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("main h1")))
	}
	b.shot("overview")
	for _, p := range []struct{ name, path, want string }{
		{"propositions", "propositions", "P-api-cert-valid"},
		{"proposition", "proposition?id=P-backup-restores", "STALE after"},
		{"decisions", "decisions", "REQUIRE_CONFIRMATION"},
		{"decision", "decision?id=" + pending, "Approval trail"},
		{"graph", "graph?q=delete,file#trace-h", "Grounding trace"},
		{"inbox", "inbox", "Approve once"},
	} {
		b.run("open "+p.name, chromedp.Navigate(base+p.path), chromedp.WaitVisible(chromedp.CSS("main h1")))
		if s := b.text(); !strings.Contains(s, p.want) {
			t.Fatalf("%s: page lacks %q: %q", p.name, p.want, s)
		}
		b.shot(p.name)
	}

	// A form stripped of its CSRF token is refused.
	b.run("strip the CSRF token", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](`document.querySelectorAll('form[action="/console/approve"] input[name=csrf]').forEach(e => e.remove())`)(ctx, tg)
		return err
	}), chromedp.Click(chromedp.CSS("#approve-once-"+pending)), chromedp.WaitVisible(chromedp.CSS(".message")))
	if s := b.text(); !strings.Contains(s, "CSRF token is missing") {
		t.Fatalf("form without CSRF: page says %q", s)
	}
	// A page on a foreign origin that posts to the console is refused.
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%sapprove"><input type="hidden" name="decision_id" value="%s">`+
			`<input type="hidden" name="verdict" value="once"><button id="go">win a prize</button></form>`, base, pending)
	}))
	defer foreign.Close()
	b.run("foreign page posts", chromedp.Navigate(foreign.URL), chromedp.Click(chromedp.CSS("#go")), chromedp.WaitVisible(chromedp.CSS(".message")))
	if s := b.text(); !strings.Contains(s, "is not this server") {
		t.Fatalf("foreign origin: page says %q", s)
	}
	// Neither refusal recorded anything: the agent is still waiting.
	retry := agent("may_act", upgrade)
	if retry.out["decision"] != "REQUIRE_CONFIRMATION" {
		t.Fatalf("after the refused forms: %+v", retry)
	}
	// The retry is the same call by the same caller: the inbox shows one
	// card for both, its newest decision, asked twice; answering it closes
	// the first as superseded.
	firstAsked := pending
	pending, _ = retry.out["decision_id"].(string)

	// Approve once from the inbox; the page names the approval.
	b.run("approve once", chromedp.Navigate(base+"inbox"), chromedp.WaitVisible(chromedp.CSS("#approve-once-"+pending)))
	if s := b.text(); !strings.Contains(s, "asked 2 times") {
		t.Fatalf("the inbox does not count the retry: %q", s)
	}
	b.run("approve once", chromedp.Click(chromedp.CSS("#approve-once-"+pending)), chromedp.WaitVisible(chromedp.CSS(".notice code")))
	approval, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(".notice code")))
	if err != nil || approval == "" {
		t.Fatalf("the approval's id on the page: %q %v", approval, err)
	}

	lifted := agent("may_act", with(upgrade, "approval_id", approval))
	if lifted.out["decision"] != "MAY_ACT" || !hasApprovalReason(lifted.out, "APPROVED") {
		t.Fatalf("the browser's approval did not lift the decision: %+v", lifted)
	}
	again := agent("may_act", with(upgrade, "approval_id", approval))
	if again.out["decision"] != "REQUIRE_CONFIRMATION" || !hasApprovalReason(again.out, "APPROVAL_USED") {
		t.Fatalf("a single-use approval was accepted twice: %+v", again)
	}
	// The decision's trail shows the approval by the operator and the call
	// that presented it.
	liftedID, _ := lifted.out["decision_id"].(string)
	b.run("the approval trail", chromedp.Navigate(base+"decision?id="+pending), chromedp.WaitVisible(chromedp.CSS("main h1")))
	html, err := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("main")))
	if err != nil {
		t.Fatal(err)
	}
	if s := b.text(); !strings.Contains(s, approval) || !strings.Contains(s, "Ada Operator") || !strings.Contains(html, "decision?id="+liftedID) {
		t.Fatalf("the decision page lacks the approval %s by Ada Operator used by %s: %q", approval, liftedID, html)
	}
	b.shot("approved")
	b.run("inbox", chromedp.Navigate(base+"inbox"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	inbox, err := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("main")))
	if err != nil || strings.Contains(inbox, "approve-once-"+pending) || strings.Contains(inbox, "approve-once-"+firstAsked) || !strings.Contains(inbox, "approve-once-") {
		t.Fatalf("the inbox should list the other confirmations but not the answered %s nor its superseded %s (%v): %q", pending, firstAsked, err, inbox)
	}
}

// browser is one headless chromium with the test's steps.
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string
}

func newBrowser(t *testing.T, exe string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Headless, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// The first Run starts the browser, which lives as long as that call's
	// context: start it untimed, then bound the test's steps.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium (%s): %v", exe, err)
	}
	ctx, cancel = context.WithTimeout(ctx, time.Minute)
	t.Cleanup(cancel)
	return &browser{t: t, ctx: ctx, shots: os.Getenv("EWP_SCREENSHOTS")}
}

func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *browser) text() string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		b.t.Fatalf("read the page: %v", err)
	}
	return s
}

func (b *browser) signIn(base, token, waitFor string) {
	b.t.Helper()
	b.run("sign in", chromedp.Navigate(base+"login"),
		chromedp.SendKeys(chromedp.CSS("#operator"), "Ada Operator"),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Submit(chromedp.CSS("#token")),
		chromedp.WaitVisible(chromedp.CSS(waitFor)))
}

// shot saves the page as NAME.png in EWP_SCREENSHOTS, when set.
func (b *browser) shot(name string) {
	b.t.Helper()
	if b.shots == "" {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(b.shots, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
