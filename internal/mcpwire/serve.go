package mcpwire

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Serve serves hs on ln until ctx ends or the server fails. Then it gives
// the requests in flight up to grace to be answered — a request read
// whole is answered, and its decision committed, even when its client has
// gone — and returns nil on a clean stop. stopping, when not nil, is
// called once ctx has ended, before the wait. ewp-mcp and ewp-gateway
// both stop this way.
func Serve(ctx context.Context, hs *http.Server, ln net.Listener, grace time.Duration, stopping func()) error {
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if stopping != nil {
		stopping()
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
