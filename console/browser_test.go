package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ewp-go/ewp/internal/testskip"
)

// chromiumPath finds Debian's chromium (CI installs it with apt-get); the
// test never downloads a browser. Without one it skips, except when CI is
// set, where it fails.
func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium binary on PATH; install Debian's chromium (apt-get install -y chromium) to run the console's browser test"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: .ci/run installs it, and a missing browser must not pass the build)")
	}
	t.Skip(testskip.Message(testskip.Chromium, msg))
	return ""
}

// TestBrowser drives the console in a real browser: sign in, every page,
// approve a pending decision from the inbox (then the log holds an
// approval by the signed-in operator that covers it), and the refusals:
// a wrong token, a form stripped of its CSRF token, and a form posted from
// a foreign origin. With EWP_SCREENSHOTS set, each page is saved there.
func TestBrowser(t *testing.T) {
	exe := chromiumPath(t)
	e := newEnv(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Headless, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// The first Run starts the browser, which lives as long as that call's
	// context: start it untimed, then bound the test's steps.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium (%s): %v", exe, err)
	}
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	shots := os.Getenv("EWP_SCREENSHOTS")
	base := e.srv.URL + "/console/"

	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func() string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		if err != nil {
			t.Fatalf("read the page: %v", err)
		}
		return s
	}
	shot := func(name string) {
		if shots == "" {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	signIn := func(token, waitFor string) {
		run("sign in", chromedp.Navigate(base+"login"),
			chromedp.SendKeys(chromedp.CSS("#operator"), "Ada Operator"),
			chromedp.SendKeys(chromedp.CSS("#token"), token),
			chromedp.Submit(chromedp.CSS("#token")),
			chromedp.WaitVisible(chromedp.CSS(waitFor)))
	}

	// A wrong token is refused with a message, and no session results.
	run("open sign-in", chromedp.Navigate(base+"login"), chromedp.WaitVisible(chromedp.CSS("#token")))
	shot("login")
	signIn("not-the-operator-token", ".message")
	if s := text(); !strings.Contains(s, "Wrong operator token") {
		t.Fatalf("wrong token: page says %q", s)
	}
	run("overview signed out", chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#token")))

	signIn(testToken, "nav")
	if s := text(); !strings.Contains(s, "Propositions by state") || !strings.Contains(s, "Signed in as Ada Operator") {
		t.Fatalf("after sign in: %q", s)
	}
	shot("overview")

	for _, p := range []struct{ name, path, want string }{
		{"propositions", "propositions", "P-api-cert-valid"},
		{"proposition", "proposition?id=P-restic-snapshots", "STALE after"},
		{"decisions", "decisions", "REQUIRE_CONFIRMATION"},
		{"decision", "decision?id=" + e.pending.ID, "Approval trail"},
		{"graph", "graph?q=delete,file#trace-h", "Grounding trace"},
		{"inbox", "inbox", "Approve once"},
	} {
		run("open "+p.name, chromedp.Navigate(base+p.path), chromedp.WaitVisible(chromedp.CSS("main h1")))
		if s := text(); !strings.Contains(s, p.want) {
			t.Fatalf("%s: page lacks %q", p.name, p.want)
		}
		shot(p.name)
	}

	// A form stripped of its CSRF token is refused (the browser submits
	// exactly what a forged form without the token would).
	run("strip the CSRF token", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](`document.querySelectorAll('form[action="/console/approve"] input[name=csrf]').forEach(e => e.remove())`)(ctx, tg)
		return err
	}),
		chromedp.Click(chromedp.CSS("#approve-once-"+e.pending.ID)), chromedp.WaitVisible(chromedp.CSS(".message")))
	if s := text(); !strings.Contains(s, "CSRF token is missing") {
		t.Fatalf("form without CSRF: page says %q", s)
	}
	if aps := e.approvals(t, e.pending.ID); len(aps) != 0 {
		t.Fatalf("a form without CSRF recorded %d approval(s)", len(aps))
	}

	// A form on a foreign origin that posts to the console is refused.
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%sapprove"><input type="hidden" name="decision_id" value="%s"><input type="hidden" name="verdict" value="once"><button id="go">win a prize</button></form>`, base, e.pending.ID)
	}))
	defer foreign.Close()
	run("foreign page posts", chromedp.Navigate(foreign.URL), chromedp.Click(chromedp.CSS("#go")), chromedp.WaitVisible(chromedp.CSS(".message")))
	if s := text(); !strings.Contains(s, "is not this server") {
		t.Fatalf("foreign origin: page says %q", s)
	}
	if aps := e.approvals(t, e.pending.ID); len(aps) != 0 {
		t.Fatalf("a foreign form recorded %d approval(s)", len(aps))
	}

	// Approve once from the inbox.
	run("approve once", chromedp.Navigate(base+"inbox"), chromedp.WaitVisible(chromedp.CSS("#approve-once-"+e.pending.ID)),
		chromedp.Click(chromedp.CSS("#approve-once-"+e.pending.ID)), chromedp.WaitVisible(chromedp.CSS(".notice")))
	aps := e.approvals(t, e.pending.ID)
	if len(aps) != 1 || aps[0].Approver != "console/Ada Operator" || aps[0].Covers(e.pending, clockAt) != nil {
		t.Fatalf("after approving in the browser the log holds %+v, want one approval by Ada Operator covering %s", aps, e.pending.ID)
	}
	if s := text(); !strings.Contains(s, aps[0].ID) {
		t.Fatalf("the decision page does not show approval %s", aps[0].ID)
	}
	shot("approved")
	run("inbox empty", chromedp.Navigate(base+"inbox"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	if s := text(); !strings.Contains(s, "Nothing is waiting") {
		t.Fatalf("inbox after approving: %q", s)
	}
}
