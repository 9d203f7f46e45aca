package mcp

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Every revision the SDK implements is negotiated: the handshake ones via
// initialize, 2026-07-28 via server/discover.
func TestNegotiatesEveryRevision(t *testing.T) {
	for _, version := range mcpgo.ValidProtocolVersions {
		for _, tr := range []string{"http", "stdio"} {
			t.Run(tr+"/"+version, func(t *testing.T) {
				srv, _ := newTestServer(t)
				c := rawClient(t, srv, tr, client.WithProtocolVersion(version))
				if got := c.ProtocolVersion(); got != version {
					t.Fatalf("negotiated %q, want %q", got, version)
				}
				mustOK(t, call(t, c, "warrant_now", obj{"proposition_id": "P-verified", "evaluated_at": testT}))
			})
		}
	}
}

// rawClient connects a client built with opts over transport tr.
func rawClient(t *testing.T, srv *Server, tr string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	if tr == "http" {
		c, err := client.NewStreamableHttpClient(httpTestServer(t, srv).URL + EndpointPath)
		if err != nil {
			t.Fatal(err)
		}
		return start(t, client.NewClient(c.GetTransport(), opts...))
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.ServeStdio(ctx, inR, outW, false); _ = outW.Close(); close(done) }()
	t.Cleanup(func() { _ = inW.Close(); cancel(); <-done })
	tp := transport.NewIO(outR, inW, io.NopCloser(strings.NewReader("")))
	return start(t, client.NewClient(tp, opts...))
}
