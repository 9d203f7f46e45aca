package front

import (
	"context"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/server"
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
func (f *Front) ServeStdio(ctx context.Context, stdin io.Reader, stdout io.Writer, ctxFunc func(context.Context) context.Context) error {
	s := server.NewStdioServer(f.mcp)
	s.SetContextFunc(func(ctx context.Context) context.Context {
		ctx = context.WithValue(ctx, transportKey{}, "stdio")
		if ctxFunc != nil {
			ctx = ctxFunc(ctx)
		}
		return ctx
	})
	return s.Listen(ctx, stdin, stdout)
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
