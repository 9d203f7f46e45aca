package downstream

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/procstop"
)

func TestStdioListAndCall(t *testing.T) {
	r, lg := start(t, Options{PinOnFirstSight: true}, stdioServer(t, "fake", nil))
	tools := r.Tools()
	if len(tools) != 11 {
		t.Fatalf("%d tools, want 11: %+v", len(tools), tools)
	}
	echo, ok := r.Tool("fake__echo")
	if !ok || !echo.Listed() || echo.Server != "fake" || echo.Definition.Name != "echo" || echo.Definition.Description != "Echo the text." {
		t.Fatalf("echo = %+v", echo)
	}
	mustEcho(t, r, "fake__echo", "hello")
	// The child's stderr is in the log, escaped: no raw ESC reaches it.
	eventually(t, "stderr in the log", func() bool { return strings.Contains(lg.String(), "fake server starting") })
	if l := lg.String(); strings.ContainsRune(l, 0x1b) || !strings.Contains(l, `x1b[31mred`) {
		t.Errorf("stderr not escaped in the log:\n%s", l)
	}
}

func TestHTTPListAndCall(t *testing.T) {
	r, lg := start(t, Options{PinOnFirstSight: true}, httpServer(t, "web"))
	if _, ok := r.Tool("web__echo"); !ok {
		t.Fatalf("tools = %+v", r.Tools())
	}
	mustEcho(t, r, "web__echo", "over http")
	if strings.Contains(lg.String(), "s3cret-header") {
		t.Errorf("a header value reached the log:\n%s", lg)
	}
}

func TestProgressPassesThrough(t *testing.T) {
	r, _ := start(t, Options{PinOnFirstSight: true}, stdioServer(t, "fake", nil), httpServer(t, "web"))
	for _, name := range []string{"fake__slow", "web__slow"} {
		var mu sync.Mutex
		var got []Progress
		res, err := r.Call(context.Background(), name, []byte(`{"steps": 3}`), func(p Progress) {
			mu.Lock()
			got = append(got, p)
			mu.Unlock()
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if text(t, res) != "done" {
			t.Fatalf("%s = %+v", name, res)
		}
		mu.Lock()
		if len(got) != 3 || got[2] != (Progress{Progress: 3, Total: 3, Message: "step 3"}) {
			t.Errorf("%s: progress = %+v, want 3 steps of 3", name, got)
		}
		mu.Unlock()
	}
}

// The caller's cancellation reaches the server: its handler's context
// ends (it writes the mark), and the caller is answered at once.
func TestCancellationPassesThrough(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	r, _ := start(t, Options{PinOnFirstSight: true}, stdioServer(t, "fake", map[string]string{"EWP_FAKE_MARK": mark}))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	began := time.Now()
	_, err := r.Call(ctx, "fake__wait", nil, nil)
	wantCode(t, err, CodeCancelled, "fake")
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("cancelled call answered after %s", d)
	}
	eventually(t, "the server to see the cancellation", func() bool {
		b, _ := os.ReadFile(mark)
		return string(b) == "cancelled"
	})
	mustEcho(t, r, "fake__echo", "still here")
}

// Over HTTP the cancellation closes the request's stream, and the
// server's handler sees its context end.
func TestCancellationPassesThroughHTTP(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	t.Setenv("EWP_FAKE_MARK", mark) // the HTTP fake runs in this process
	r, _ := start(t, Options{PinOnFirstSight: true}, httpServer(t, "web"))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := r.Call(ctx, "web__wait", nil, nil)
	wantCode(t, err, CodeCancelled, "web")
	eventually(t, "the server to see the cancellation", func() bool {
		b, _ := os.ReadFile(mark)
		return string(b) == "cancelled"
	})
	mustEcho(t, r, "web__echo", "still here")
}

// A server killed during a call: the caller gets UNAVAILABLE naming it,
// the other server keeps serving, and the killed one comes back.
func TestKilledMidCall(t *testing.T) {
	r, _ := start(t, Options{PinOnFirstSight: true}, stdioServer(t, "fake", nil), stdioServer(t, "other", nil))
	pid := serverPid(t, r, "fake__pid")
	time.AfterFunc(200*time.Millisecond, func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	_, err := call(t, r, "fake__wait", "")
	e := wantCode(t, err, CodeUnavailable, "fake")
	if !strings.Contains(e.Error(), "fake") || e.Tool != "fake__wait" {
		t.Errorf("error %q does not name the server and tool", e)
	}
	mustEcho(t, r, "other__echo", "unaffected")
	eventuallyEcho(t, r, "fake__echo")
	if serverPid(t, r, "fake__pid") == pid {
		t.Error("the server was not restarted")
	}
	// A server that exits by itself mid-call is the same.
	_, err = call(t, r, "fake__crash", "")
	wantCode(t, err, CodeUnavailable, "fake")
	eventuallyEcho(t, r, "fake__echo")
}

func serverPid(t *testing.T, r *Registry, name string) int {
	t.Helper()
	res, err := call(t, r, name, "")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(text(t, res))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// A call that never gets an answer is TIMEOUT at the server's deadline;
// a server still answering pings keeps running, one that answers nothing
// is restarted.
func TestHang(t *testing.T) {
	srv := stdioServer(t, "fake", nil)
	srv.Timeout = 500 * time.Millisecond
	r, _ := start(t, Options{PinOnFirstSight: true}, srv, stdioServer(t, "other", nil))
	pid := serverPid(t, r, "fake__pid")
	began := time.Now()
	_, err := call(t, r, "fake__hang", "")
	wantCode(t, err, CodeTimeout, "fake")
	if d := time.Since(began); d < 500*time.Millisecond || d > 3*time.Second {
		t.Errorf("timed out after %s, want about 500ms", d)
	}
	// The probe after the timeout is answered: wait for it to end (on a
	// loaded machine it may start late), then the server must be the same.
	waitProbed(t, r.conns["fake"])
	if serverPid(t, r, "fake__pid") != pid {
		t.Fatal("a server that answers pings was restarted")
	}
	// Now the whole server stops answering.
	freeze(t, pid)
	defer syscall.Kill(pid, syscall.SIGCONT)
	_, err = call(t, r, "fake__echo", `{"text":"x"}`)
	wantCode(t, err, CodeTimeout, "fake")
	mustEcho(t, r, "other__echo", "unaffected")
	eventuallyEcho(t, r, "fake__echo")
	if serverPid(t, r, "fake__pid") == pid {
		t.Error("the hung server was not replaced")
	}
}

// freeze stops process pid and returns once it has stopped (kill returns
// before: see procstop; CI met the server answering the next call).
func freeze(t *testing.T, pid int) {
	t.Helper()
	if err := procstop.Stop(pid, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// waitProbed waits until c's session has been probed after a timeout
// and the probe has ended: the probe starts on a goroutine of its own,
// which on a loaded machine may start late, so the test counts probes
// ended rather than guess how long one takes to begin.
func waitProbed(t *testing.T, c *conn) {
	t.Helper()
	s := c.session()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s == nil || s.ended() || s.probed.Load() > 0 {
			return
		}
	}
	t.Fatal("the probe after the timeout did not end within 10 s")
}

// A line over the cap or a stream of garbage on stdout is PROTOCOL; the
// server is restarted; over HTTP a response line over the cap is too.
func TestFlood(t *testing.T) {
	r, lg := start(t, Options{PinOnFirstSight: true}, stdioServer(t, "fake", nil), httpServer(t, "web"))
	for _, tool := range []string{"fake__flood", "fake__garbage"} {
		_, err := call(t, r, tool, "")
		wantCode(t, err, CodeProtocol, "fake")
		mustEcho(t, r, "web__echo", "unaffected")
		eventuallyEcho(t, r, "fake__echo")
	}
	if !strings.Contains(lg.String(), "garbage line 0") {
		t.Errorf("the dropped garbage is not in the log")
	}
	_, err := call(t, r, "web__big", "")
	wantCode(t, err, CodeProtocol, "web")
	eventuallyEcho(t, r, "web__echo")
}

// A definition that changes after pinning is withheld and refused, the
// change is reported once, and pinning again restores it.
func TestDescriptionChangedAfterPinning(t *testing.T) {
	var mu sync.Mutex
	var changes []Change
	listChanged := 0
	opt := Options{PinOnFirstSight: true,
		OnChange:      func(c Change) { mu.Lock(); changes = append(changes, c); mu.Unlock() },
		OnListChanged: func() { mu.Lock(); listChanged++; mu.Unlock() }}
	r, _ := start(t, opt, stdioServer(t, "fake", nil))
	before, _ := r.Tool("fake__echo")
	mustEcho(t, r, "fake__echo", "ok")
	if _, err := call(t, r, "fake__mutate", ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the changed definition", func() bool { t2, _ := r.Tool("fake__echo"); return t2.State == Changed })
	after, _ := r.Tool("fake__echo")
	if after.Listed() || after.Pinned != before.SHA256 || after.SHA256 == before.SHA256 || !strings.Contains(after.Definition.Description, "id_rsa") {
		t.Fatalf("after = %+v", after)
	}
	_, err := call(t, r, "fake__echo", `{"text":"x"}`)
	wantCode(t, err, CodeToolChanged, "fake")
	mu.Lock()
	var changed []Change
	firstSeen := 0
	for _, c := range changes {
		if c.Kind == ToolFirstSeen {
			firstSeen++
			if c.Tool.State != Pinned || c.Was != "" {
				t.Errorf("a pin on first sight: %+v", c)
			}
		}
		if c.Kind == ToolChanged {
			changed = append(changed, c)
		}
	}
	if len(changed) != 1 || changed[0].Tool.Name != "fake__echo" || changed[0].Was != before.SHA256 || changed[0].Tool.SHA256 != after.SHA256 {
		t.Errorf("changes = %+v, want one change of fake__echo", changes)
	}
	if listChanged == 0 {
		t.Error("OnListChanged was not called")
	}
	if firstSeen != len(r.Tools()) {
		t.Errorf("%d pins on first sight reported, want one per tool (%d)", firstSeen, len(r.Tools()))
	}
	mu.Unlock()
	if _, err := r.Pin("fake__echo"); err != nil {
		t.Fatal(err)
	}
	if now, _ := r.Tool("fake__echo"); !now.Listed() {
		t.Fatalf("after pinning again: %+v", now)
	}
	mustEcho(t, r, "fake__echo", "pinned again")
}

// Without pin_on_first_sight nothing is listed or callable until pinned;
// a pin made by another process (ewp-gateway pin) is honoured; a new
// definition at a restart is a change.
func TestUnpinnedUntilPinned(t *testing.T) {
	dir := t.TempDir()
	pinsPath := filepath.Join(dir, "pins.json")
	srv := stdioServer(t, "fake", nil)
	r, _ := start(t, Options{PinsPath: pinsPath, PinsPoll: 50 * time.Millisecond}, srv)
	for _, tl := range r.Tools() {
		if tl.State != Unpinned || tl.Listed() {
			t.Fatalf("%+v, want unpinned", tl)
		}
	}
	_, err := call(t, r, "fake__echo", `{"text":"x"}`)
	wantCode(t, err, CodeToolUnpinned, "fake")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg := configFor{srv, pinsPath}.config()
	rep, err := Pin(ctx, &cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Pinned) != 11 || len(rep.Failed) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	eventually(t, "the running registry to see the pins", func() bool { tl, _ := r.Tool("fake__echo"); return tl.Listed() })
	mustEcho(t, r, "fake__echo", "pinned")

	changed := stdioServer(t, "fake", map[string]string{"EWP_FAKE_DESC": "Echo, and more."})
	r2, _ := start(t, Options{PinsPath: pinsPath, PinOnFirstSight: true}, changed)
	if tl, _ := r2.Tool("fake__echo"); tl.State != Changed {
		t.Fatalf("a definition changed across a restart: %+v", tl)
	}
	if tl, _ := r2.Tool("fake__slow"); !tl.Listed() {
		t.Fatalf("an unchanged tool: %+v", tl)
	}
}

// A server that keeps dying is restarted with doubling waits, capped.
func TestRestartBackoff(t *testing.T) {
	bad := stdioServer(t, "bad", nil)
	bad.Env[fakeEnv] = "exit"
	bad.Restart.Min, bad.Restart.Max = 40*time.Millisecond, 160*time.Millisecond
	r, lg := start(t, Options{}, bad, stdioServer(t, "good", nil))
	eventually(t, "six restarts", func() bool { return strings.Count(lg.String(), "server=bad") >= 12 })
	var waits []string
	for _, line := range strings.Split(lg.String(), "\n") {
		if strings.Contains(line, "restarting after a backoff") && strings.Contains(line, "server=bad") {
			_, w, _ := strings.Cut(line, "backoff=")
			waits = append(waits, w)
		}
	}
	want := []string{"40ms", "80ms", "160ms", "160ms"}
	if len(waits) < len(want) || strings.Join(waits[:4], " ") != strings.Join(want, " ") {
		t.Fatalf("backoffs = %v, want %v first", waits, want)
	}
	_, err := call(t, r, "bad__echo", "")
	wantCode(t, err, CodeUnknownTool, "")
	st := r.Servers()
	if st[0].Name != "bad" || st[0].Up || st[0].Err == nil || !st[1].Up {
		t.Errorf("servers = %+v", st)
	}
}

// Servers that fail in every way at once do not stop the good ones.
func TestOneBadServerDoesNotStopOthers(t *testing.T) {
	missing := stdioServer(t, "missing", nil)
	missing.Command = filepath.Join(t.TempDir(), "no-such-server")
	r, _ := start(t, Options{PinOnFirstSight: true}, missing, stdioServer(t, "flood", nil), stdioServer(t, "good", nil), httpServer(t, "web"))
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i {
			case 0:
				_, err := call(t, r, "flood__flood", "")
				if CodeOf(err) != CodeProtocol {
					t.Errorf("flood: %v", err)
				}
			case 1:
				_, err := call(t, r, "flood__hang", "")
				if c := CodeOf(err); c != CodeProtocol && c != CodeUnavailable && c != CodeTimeout {
					t.Errorf("hang on the flooding server: %v", err)
				}
			default:
				for range 20 {
					mustEcho(t, r, "good__echo", "fine")
					mustEcho(t, r, "web__echo", "fine")
				}
			}
		}()
	}
	wg.Wait()
	for _, st := range r.Servers() {
		if st.Name == "missing" && (st.Up || !strings.Contains(st.Err.Error(), "no-such-server")) {
			t.Errorf("missing: %+v", st)
		}
	}
}

// An HTTP server that goes away is UNAVAILABLE; one never reachable has
// no tools; neither holds up the rest.
func TestHTTPServerGoesAway(t *testing.T) {
	ts := fakeHTTP(t)
	web := httpServer(t, "web")
	web.URL = ts.URL + "/mcp"
	never := httpServer(t, "never")
	never.URL = "http://127.0.0.1:1/mcp"
	r, _ := start(t, Options{PinOnFirstSight: true}, web, never, stdioServer(t, "fake", nil))
	mustEcho(t, r, "web__echo", "up")
	ts.CloseClientConnections()
	ts.Close()
	_, err := call(t, r, "web__echo", `{"text":"x"}`)
	wantCode(t, err, CodeUnavailable, "web")
	mustEcho(t, r, "fake__echo", "unaffected")
	for _, st := range r.Servers() {
		if st.Name == "never" && (st.Up || st.Err == nil) {
			t.Errorf("never: %+v", st)
		}
	}
	if _, ok := r.Tool("never__echo"); ok {
		t.Error("a server never reached lists tools")
	}
}

// A server that stops reading its stdin with the pipe full cannot hold a
// call past its deadline, nor the calls after it: the write times out
// and the server is restarted.
func TestServerStopsReadingStdin(t *testing.T) {
	srv := stdioServer(t, "fake", nil)
	srv.Timeout = 500 * time.Millisecond
	r, _ := start(t, Options{PinOnFirstSight: true}, srv)
	pid := serverPid(t, r, "fake__pid")
	freeze(t, pid)
	defer syscall.Kill(pid, syscall.SIGCONT)
	big := `{"text":"` + strings.Repeat("z", 256<<10) + `"}` // four times a pipe's buffer
	done := make(chan error, 1)
	go func() { _, err := call(t, r, "fake__echo", big); done <- err }()
	select {
	case err := <-done:
		if c := CodeOf(err); c != CodeUnavailable && c != CodeTimeout {
			t.Fatalf("err = %v, want UNAVAILABLE or TIMEOUT", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a call to a server that does not read its stdin is still waiting after 5s")
	}
	eventuallyEcho(t, r, "fake__echo")
	if serverPid(t, r, "fake__pid") == pid {
		t.Error("the server was not replaced")
	}
}

// A server's stderr is logged a line at a time, each cut at 4 KiB, at
// most 200 lines a second; the rest are counted.
func TestStderrIsBounded(t *testing.T) {
	r, lg := start(t, Options{PinOnFirstSight: true}, stdioServer(t, "fake", nil))
	if _, err := call(t, r, "fake__spew", ""); err != nil {
		t.Fatal(err)
	}
	_ = r.Close() // the count of a window is logged when it ends, or at the end of stderr
	eventually(t, "the drop count", func() bool { return strings.Contains(lg.String(), "stderr lines dropped") })
	l := lg.String()
	if n := strings.Count(l, "spew "); n > 2*maxStderrLinesPerSecond || n == 0 {
		t.Errorf("%d spew lines logged, want at most %d", n, 2*maxStderrLinesPerSecond)
	}
	_, long, ok := strings.Cut(l, "line=BEGIN")
	long, _, _ = strings.Cut(long, "\n")
	if !ok || strings.Contains(long, "END") || !strings.Contains(long, "truncated_bytes=") || len(long) > maxStderrLine+100 {
		t.Errorf("the long line was not cut at its start: %.200q", long)
	}
}
