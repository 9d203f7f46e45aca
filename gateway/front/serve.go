package front

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ewp-go/ewp/internal/linecap"
)

type transportKey struct{}

// transportOf is the transport the call came on ("stdio" or "http").
func transportOf(ctx context.Context) string {
	t, _ := ctx.Value(transportKey{}).(string)
	return t
}

// ServeStdio serves the front on stdin/stdout until ctx ends or stdin
// closes. ctxFunc, when not nil, adds to each call's context what the
// process knows of its caller (the principal of --agent).
//
// mcp-go reads stdin without a bound on a line, so stdin reaches it
// through a pump that skips a line over Config.MaxMessageBytes as it
// reads it and answers it with a JSON-RPC error (id null: the line was
// not kept), as ewp-mcp does.
func (f *Front) ServeStdio(ctx context.Context, stdin io.Reader, stdout io.Writer, ctxFunc func(context.Context) context.Context) error {
	s := server.NewStdioServer(f.mcp)
	s.SetContextFunc(func(ctx context.Context) context.Context {
		ctx = context.WithValue(ctx, transportKey{}, "stdio")
		if ctxFunc != nil {
			ctx = ctxFunc(ctx)
		}
		return ctx
	})
	out := &syncWriter{w: stdout}
	pr, pw := io.Pipe()
	go f.pumpStdio(stdin, pw, out)
	err := s.Listen(ctx, pr, out)
	_ = pr.Close() // unblocks the pump if Listen ended first
	return err
}

// pumpStdio passes stdin's lines to p, each whole, until stdin ends.
func (f *Front) pumpStdio(stdin io.Reader, p *io.PipeWriter, out io.Writer) {
	lines := linecap.NewReader(stdin, f.cfg.MaxMessageBytes)
	for {
		line, err := lines.Next()
		if errors.Is(err, linecap.ErrTooLong) {
			if _, werr := out.Write(f.tooLongReply()); werr != nil {
				_ = p.CloseWithError(werr)
				return
			}
			continue
		}
		if len(line) > 0 {
			if _, perr := p.Write(append(line, '\n')); perr != nil {
				return // Listen has ended
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil // p's reader sees io.EOF
			}
			_ = p.CloseWithError(err)
			return
		}
	}
}

// tooLongReply answers a line over the bound, with its newline.
func (f *Front) tooLongReply() []byte {
	msg := fmt.Sprintf("message exceeds %d bytes and was skipped", f.cfg.MaxMessageBytes)
	if f.cfg.RaiseHint != "" {
		msg += "; " + f.cfg.RaiseHint
	}
	b, _ := json.Marshal(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INVALID_REQUEST, msg, nil))
	return append(b, '\n')
}

// syncWriter keeps the pump's replies and mcp-go's (one Write a message)
// from interleaving within a line.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// HTTPHandler is the Streamable HTTP transport of the front at path,
// stateless (each request stands alone, so no session state is held per
// client; elicitation is then not sent). ctxFunc adds what the request
// says of its caller; the guards in front of it (Host/Origin, body size,
// credentials) are the caller's to add.
func (f *Front) HTTPHandler(path string, ctxFunc func(context.Context, *http.Request) context.Context) http.Handler {
	return server.NewStreamableHTTPServer(f.mcp,
		server.WithEndpointPath(path),
		server.WithStateLess(true),
		server.WithDisableStreaming(true),
		server.WithDisableLocalhostProtection(true), // the caller's guard is stricter
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			ctx = context.WithValue(ctx, transportKey{}, "http")
			if ctxFunc != nil {
				ctx = ctxFunc(ctx, r)
			}
			return ctx
		}))
}
