package downstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ewp-go/ewp/gateway/config"
	"github.com/ewp-go/ewp/internal/termtext"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
)

// session is one live connection to a server: a started child process
// or an HTTP endpoint, with an initialized client. It ends once (end),
// for a reason (cause).
type session struct {
	cli     *client.Client
	dead    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	cause   error
	stop    func() // releases the process or the HTTP client
	started time.Time
	// gone is closed when nothing of the session is left running: the
	// process has exited (stdio), or at once when it ends (HTTP).
	gone    chan struct{}
	probing atomic.Bool  // a liveness probe is under way (conn.probe)
	probed  atomic.Int32 // liveness probes that have ended, answered or not
}

func newSession() *session {
	return &session{dead: make(chan struct{}), gone: make(chan struct{}), started: time.Now()}
}

// end records why the session ended (the first reason wins), closes the
// client (failing every request in flight) and stops the server.
func (s *session) end(cause error) {
	s.once.Do(func() {
		s.mu.Lock()
		s.cause = cause
		s.mu.Unlock()
		close(s.dead)
		if s.cli != nil {
			_ = s.cli.Close()
		}
		if s.stop != nil {
			s.stop()
		}
	})
}

func (s *session) why() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cause
}

func (s *session) ended() bool {
	select {
	case <-s.dead:
		return true
	default:
		return false
	}
}

// inheritedEnv are the variables a stdio server gets from the gateway's
// own environment; everything else it needs is in its config's env.
// Nothing else is passed on, so the gateway's secrets (EWP_OPERATOR_TOKEN,
// a database URL with its password) never reach a downstream.
var inheritedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
	"SYSTEMROOT", "APPDATA", "LOCALAPPDATA", "USERPROFILE", "PATHEXT", "COMSPEC"}

func childEnv(extra map[string]string) []string {
	var env []string
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// maxStderrLine bounds one logged line of a server's stderr; the rest of
// a longer line is counted, not logged.
const maxStderrLine = 4 << 10

// startStdio starts the server's command with its stdout behind a
// lineGuard and its stderr copied, line by line and escaped, to log.
func startStdio(ctx context.Context, srv config.Server, maxLine int, log *slog.Logger) (*session, error) {
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = childEnv(srv.Env)
	cmd.Dir = srv.Cwd
	ownGroup(cmd)
	pipes, err := newPipes()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes.childIn, pipes.childOut, pipes.childErr
	if err := cmd.Start(); err != nil {
		pipes.closeAll()
		return nil, fmt.Errorf("start %s: %w", srv.Command, err)
	}
	pipes.closeChildEnds()
	outR, errR := pipes.out, pipes.err
	s := newSession()
	stdin := &deadlineWriter{f: pipes.in, timeout: srv.Timeout, s: s}
	s.stop = func() { stopProcess(cmd, pipes.in, s.gone) }
	guard := newLineGuard(outR, maxLine, func(line []byte) {
		log.Warn("downstream wrote a line on stdout that is not JSON-RPC; dropped", "server", srv.Name,
			"line", termtext.Escape(string(line[:min(len(line), 200)])), "bytes", len(line))
	})
	s.cli = client.NewClient(transport.NewIO(endNotifier{guard, outR, s}, stdin, nil))
	err = s.cli.Start(ctx) // the session is whole before anything may end it
	go func() {
		err := cmd.Wait()
		close(s.gone)
		if err == nil {
			err = errors.New("the server exited")
		} else {
			err = fmt.Errorf("the server exited: %w", err)
		}
		s.end(err)
	}()
	go logStderr(errR, srv.Name, log)
	if err != nil {
		s.end(err)
		return nil, err
	}
	return s, nil
}

// pipes are the three pipes of a child: the ends it gets, and ours. Ours
// are pollable, so a write to a server that stopped reading can time out.
type pipes struct {
	childIn, childOut, childErr *os.File
	in, out, err                *os.File
}

func newPipes() (*pipes, error) {
	var p pipes
	var err error
	if p.childIn, p.in, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.out, p.childOut, err = os.Pipe(); err != nil {
		p.closeAll()
		return nil, err
	}
	if p.err, p.childErr, err = os.Pipe(); err != nil {
		p.closeAll()
		return nil, err
	}
	return &p, nil
}

func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.childIn, p.childOut, p.childErr} {
		if f != nil {
			f.Close()
		}
	}
}

func (p *pipes) closeAll() {
	p.closeChildEnds()
	for _, f := range []*os.File{p.in, p.out, p.err} {
		if f != nil {
			f.Close()
		}
	}
}

// deadlineWriter writes to a server's stdin within its timeout. mcp-go
// writes a request while holding its stdin lock and the caller's context
// does not interrupt the write: without a deadline one server that stops
// reading (its pipe full) would hold every later request, and the probe
// that should find it hung, forever. A write past the deadline ends the
// session.
type deadlineWriter struct {
	f       *os.File
	timeout time.Duration
	s       *session
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	if err := w.f.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil {
		return w.f.Write(p) // not pollable: as mcp-go would
	}
	n, err := w.f.Write(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		w.s.end(fmt.Errorf("the server stopped reading its stdin (a write did not complete within %s)", w.timeout))
	}
	return n, err
}

func (w *deadlineWriter) Close() error { return w.f.Close() }

// endNotifier ends the session when the guarded stdout ends, with the
// guard's reason (a protocol violation) or "stdout closed". mcp-go is
// given a plain io.EOF: it logs any other error to slog's default logger,
// and the reason is the session's to tell.
type endNotifier struct {
	r io.Reader
	f *os.File
	s *session
}

func (e endNotifier) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		if !isProtocol(err) {
			err = fmt.Errorf("the server closed its stdout: %w", err)
		}
		e.s.end(err)
		e.f.Close()
		return n, io.EOF
	}
	return n, nil
}

// stopProcess closes stdin, then signals the process group: SIGTERM after
// a grace period, SIGKILL after another. It returns at once if the
// process has already exited.
func stopProcess(cmd *exec.Cmd, stdin io.Closer, exited <-chan struct{}) {
	_ = stdin.Close()
	go func() {
		for _, step := range []func(){func() { signalGroup(cmd, false) }, func() { signalGroup(cmd, true) }} {
			select {
			case <-exited:
				signalGroup(cmd, true) // what the server left running
				return
			case <-time.After(time.Second):
				step()
			}
		}
	}()
}

func logStderr(r *os.File, server string, log *slog.Logger) {
	defer r.Close()
	br := bufio.NewReaderSize(r, maxStderrLine)
	budget := lineBudget{max: maxStderrLinesPerSecond, window: time.Second}
	dropped := func(n int) {
		log.Warn("downstream stderr lines dropped (more than the rate logged)", "server", server, "dropped", n, "per_second", maxStderrLinesPerSecond)
	}
	for {
		line, err := br.ReadSlice('\n')
		text := termtext.Escape(string(trimNewline(line))) // copied: the buffer is reused below
		extra := 0
		for errors.Is(err, bufio.ErrBufferFull) { // the rest of a long line: count it, skip it
			var more []byte
			more, err = br.ReadSlice('\n')
			extra += len(more)
		}
		if len(line) > 0 && budget.take(time.Now(), dropped) {
			if extra > 0 {
				log.Info("downstream stderr", "server", server, "line", text, "truncated_bytes", extra)
			} else {
				log.Info("downstream stderr", "server", server, "line", text)
			}
		}
		if err != nil {
			budget.flush(dropped)
			return
		}
	}
}

// maxStderrLinesPerSecond bounds how many stderr lines of one server are
// logged a second; the rest are counted and the count logged.
const maxStderrLinesPerSecond = 200

// lineBudget lets max lines through per window and counts the others.
type lineBudget struct {
	max     int
	window  time.Duration
	start   time.Time
	n       int
	dropped int
}

// take reports whether one more line may be logged at now; report is
// told how many were dropped in a window that has ended.
func (b *lineBudget) take(now time.Time, report func(int)) bool {
	if now.Sub(b.start) >= b.window {
		b.flush(report)
		b.start, b.n = now, 0
	}
	if b.n < b.max {
		b.n++
		return true
	}
	b.dropped++
	return false
}

func (b *lineBudget) flush(report func(int)) {
	if b.dropped > 0 {
		report(b.dropped)
		b.dropped = 0
	}
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// startHTTP opens a Streamable HTTP client for the server. Responses are
// line-capped; redirects are refused, so the configured headers (a
// credential) are never sent to another address.
func startHTTP(ctx context.Context, srv config.Server, maxLine int) (*session, error) {
	s := newSession()
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = maxIdlePerServer
	hc := &http.Client{
		Transport: capTransport{base: base, max: maxLine, onLimit: s.end},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("redirects are not followed (the configured headers would go to another address)")
		},
	}
	tr, err := transport.NewStreamableHTTP(srv.URL, transport.WithHTTPBasicClient(hc),
		transport.WithHTTPHeaders(srv.Headers), transport.WithHTTPLogger(quietLogger))
	if err != nil {
		return nil, err
	}
	s.cli = client.NewClient(tr)
	s.stop = func() { base.CloseIdleConnections(); close(s.gone) }
	if err := s.cli.Start(ctx); err != nil {
		s.end(err)
		return nil, err
	}
	return s, nil
}

// maxIdlePerServer keeps connections to an HTTP server open for reuse:
// Go's default of 2 would open a new one for most calls when many agents
// call at once.
const maxIdlePerServer = 64

// quietLogger drops mcp-go's HTTP transport log, which may quote request
// details; the gateway logs what it needs itself.
var quietLogger = slog.New(slog.DiscardHandler)

type capTransport struct {
	base    http.RoundTripper
	max     int
	onLimit func(error)
}

func (t capTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &lineCap{rc: resp.Body, max: t.max, onLimit: t.onLimit}
	return resp, nil
}
