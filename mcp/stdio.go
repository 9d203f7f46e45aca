package mcp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio serves MCP over newline-delimited JSON-RPC on in and out until
// in reaches EOF or ctx ends. allowIngest is the operator's --allow-ingest:
// with it every call holds the ingest role, without it the server is
// evaluate-only. Only JSON-RPC is written to out; logs go to the Server's
// logger, which must not write to out. mcp-go keeps one stdio session per
// MCP server, so a Server serves at most one stdio stream at a time.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, allowIngest bool) error {
	r := role{ingest: allowIngest, why: whyStdioReadOnly}
	ctx = withRole(withTransport(ctx, transportStdio, ""), r)
	w := &lineWriter{w: out}
	pr, pw := io.Pipe()
	go s.pumpStdio(ctx, in, pw, w)

	ss := server.NewStdioServer(s.mcp)
	ss.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelError))
	ss.SetContextFunc(func(c context.Context) context.Context { return withRole(withTransport(c, transportStdio, ""), r) })
	err := ss.Listen(ctx, pr, w)
	_ = pr.Close() // unblocks the pump if Listen ended first
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// pumpStdio reads one message per line, screens it, answers what the
// filter answers and passes the rest to mcp-go's stdio server through p.
func (s *Server) pumpStdio(ctx context.Context, in io.Reader, p *io.PipeWriter, w *lineWriter) {
	br := bufio.NewReader(in)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if perr := s.route(ctx, line, p, w); perr != nil {
				_ = p.CloseWithError(perr)
				return
			}
		}
		if err != nil {
			_ = p.CloseWithError(ignoreEOF(err))
			return
		}
	}
}

func (s *Server) route(ctx context.Context, line []byte, p io.Writer, w *lineWriter) error {
	v := s.screen(ctx, line)
	if v.reply != nil {
		return w.writeLine(v.reply)
	}
	if v.forward == nil {
		return nil
	}
	_, err := p.Write(append(v.forward, '\n'))
	return err
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
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
