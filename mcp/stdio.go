package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/identity"
	"github.com/ewp-go/ewp/internal/linecap"
)

// ServeStdio serves MCP over newline-delimited JSON-RPC on in and out until
// in reaches EOF or ctx ends. allowIngest is the operator's --allow-ingest:
// with it every call holds the ingest role, without it the server is
// evaluate-only. Only JSON-RPC is written to out; logs go to the Server's
// logger, which must not write to out. mcp-go keeps one stdio session per
// MCP server, so a Server serves at most one stdio stream at a time.
//
// End of input ends the session only after every request read before it
// has been answered: a client may write its requests, close its end and
// then read the answers (a write among them is committed). Each answer is
// written with one Write to out, so an unbuffered out (a pipe, a file,
// os.Stdout) holds all of them when ServeStdio returns.
//
// The principal on ctx (identity.WithPrincipal) is the one every call is
// judged for; without one, calls are anonymous.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, allowIngest bool) error {
	r := role{ingest: allowIngest, why: whyStdioReadOnly}
	// A server started for one agent (ewp-mcp --agent NAME) serves every
	// call as that agent: the operator named it, so it is the credential.
	p := identity.PrincipalFrom(ctx)
	tr := transportInfo{name: transportStdio}
	if p.Name != audit.Anonymous {
		tr.credential = identity.Identity{Principal: p, Credential: identity.CredentialAgent}.Record()
	}
	ctx = withRole(withCaller(ctx, tr, p), r)
	w := &lineWriter{w: out}
	owed := &answers{}
	pr, pw := io.Pipe()
	go s.pumpStdio(ctx, in, pw, w, owed)

	ss := server.NewStdioServer(s.mcp)
	ss.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelError))
	ss.SetContextFunc(func(c context.Context) context.Context { return withRole(withCaller(c, tr, p), r) })
	err := ss.Listen(ctx, pr, answerWriter{w, owed})
	_ = pr.Close() // unblocks the pump if Listen ended first
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// drainGrace is how long, beyond the per-request deadline, end of input
// waits for answers still owed: a call abandoned at its deadline is
// answered at once, so this only covers writing the answers.
const drainGrace = 5 * time.Second

// pumpStdio reads one message per line, screens it, answers what the
// filter answers and passes the rest to mcp-go's stdio server through p.
// At end of input it waits until every forwarded request was answered
// before closing p: mcp-go cancels whatever is in flight when its input
// ends.
func (s *Server) pumpStdio(ctx context.Context, in io.Reader, p *io.PipeWriter, w *lineWriter, owed *answers) {
	lr := linecap.NewReader(in, s.maxRequest)
	for {
		line, err := lr.Next()
		if errors.Is(err, linecap.ErrTooLong) {
			if werr := w.writeLine(s.tooLongReply()); werr != nil {
				_ = p.CloseWithError(werr)
				return
			}
			continue
		}
		if len(line) > 0 {
			if perr := s.route(ctx, line, p, w, owed); perr != nil {
				_ = p.CloseWithError(perr)
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				owed.wait(ctx, s.timeout+drainGrace)
			}
			_ = p.CloseWithError(ignoreEOF(err))
			return
		}
	}
}

func (s *Server) route(ctx context.Context, line []byte, p io.Writer, w *lineWriter, owed *answers) error {
	v := s.screen(ctx, line)
	if v.reply != nil {
		return w.writeLine(v.reply)
	}
	if v.forward == nil {
		return nil
	}
	if v.request {
		owed.add()
	}
	_, err := p.Write(append(v.forward, '\n'))
	return err
}

// tooLongReply answers a stdio line over the message limit. Its id is
// unknown (the line was not kept), so it is null.
func (s *Server) tooLongReply() []byte {
	return errorReply(nil, mcpgo.INVALID_REQUEST, fmt.Sprintf(
		"message exceeds %d bytes and was skipped; the operator raises the limit with ewp-mcp --max-request-bytes", s.maxRequest), nil)
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// answers counts the requests passed to mcp-go that it has not answered
// yet, so end of input can wait for them.
type answers struct {
	mu   sync.Mutex
	owed int
	idle chan struct{} // closed when owed reaches zero while wait waits
}

func (a *answers) add() {
	a.mu.Lock()
	a.owed++
	a.mu.Unlock()
}

// paid records one message written by mcp-go. The server sends no
// notifications, so every message it writes answers a request; a stray
// one never takes the count below zero.
func (a *answers) paid() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.owed > 0 {
		a.owed--
	}
	if a.owed == 0 && a.idle != nil {
		close(a.idle)
		a.idle = nil
	}
}

// wait returns when nothing is owed, ctx ends or limit passes.
func (a *answers) wait(ctx context.Context, limit time.Duration) {
	a.mu.Lock()
	if a.owed == 0 {
		a.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	a.idle = idle
	a.mu.Unlock()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-idle:
	case <-ctx.Done():
	case <-t.C:
	}
}

// answerWriter is mcp-go's output: each Write is one message answering a
// request.
type answerWriter struct {
	w    *lineWriter
	owed *answers
}

func (a answerWriter) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	a.owed.paid()
	return n, err
}

// lineWriter serialises writes so the filter's replies and mcp-go's never
// interleave within a line (mcp-go writes each message with one Write).
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lineWriter) writeLine(b []byte) error {
	_, err := l.Write(append(b, '\n'))
	return err
}
