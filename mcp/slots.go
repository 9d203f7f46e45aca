package mcp

import (
	"context"
	"runtime"
)

// DefaultMaxConcurrentCalls is how many tool calls the server evaluates at
// once unless WithMaxConcurrentCalls says otherwise: 4 per processor, so
// the processors stay busy while some calls wait on the ledger, and peak
// memory is bounded by this many calls' working sets (a call on the
// largest view the limits admit costs tens of MB while it runs).
func DefaultMaxConcurrentCalls() int { return 4 * runtime.GOMAXPROCS(0) }

// WithMaxConcurrentCalls caps the tool calls evaluated at once (n <= 0
// keeps DefaultMaxConcurrentCalls). A call beyond the cap waits for a
// slot within its own request deadline and is refused with CodeTimeout
// if none frees.
func WithMaxConcurrentCalls(n int) Option {
	return func(s *Server) {
		if n > 0 {
			s.slots = make(chan struct{}, n)
		}
	}
}

// acquire takes an evaluation slot, waiting at most until ctx ends. The
// slot is held until the evaluation itself ends (release), not until its
// caller stops waiting: an abandoned evaluation still holds memory.
func (s *Server) acquire(ctx context.Context) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return refuse(CodeTimeout, "", "all %d evaluation slots stayed busy until the server's %v per-request deadline, so the call was not started; "+
			"retry later, or ask the operator to raise ewp-mcp --max-concurrent-calls or --request-timeout", cap(s.slots), s.timeout)
	}
}

// release frees the slot acquire took.
func (s *Server) release() { <-s.slots }

// MaxConcurrentCalls is the cap on tool calls evaluated at once.
func (s *Server) MaxConcurrentCalls() int { return cap(s.slots) }
