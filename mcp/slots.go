package mcp

import (
	"context"
	"runtime"
)

// DefaultMaxConcurrentCalls is how many tool calls the server evaluates at
// once unless WithMaxConcurrentCalls says otherwise: one per processor. An
// evaluation is CPU-bound (the kernel is pure, the ledger is read through
// a memory map), so more at once add no throughput, only memory, and the
// server's GC target (GCPercent) multiplies what is live: 64 concurrent
// warrant_now on the largest view the limits admit peaked at 609 MB with
// 4 per processor and 338 MB with 1, at the same calls/s (scripts/maxview,
// 2 processors).
func DefaultMaxConcurrentCalls() int { return runtime.GOMAXPROCS(0) }

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
		return s.slotsBusy()
	}
}

// slotsBusy is the refusal of a call that found no slot in time.
func (s *Server) slotsBusy() error {
	return refuse(CodeTimeout, "", "all %d evaluation slots stayed busy until the server's %v per-request deadline, so the call was not started; "+
		"retry later, or ask the operator to raise ewp-mcp --max-concurrent-calls or --request-timeout", cap(s.slots), s.timeout)
}

// release frees the slot acquire took.
func (s *Server) release() { <-s.slots }

// MaxConcurrentCalls is the cap on tool calls evaluated at once.
func (s *Server) MaxConcurrentCalls() int { return cap(s.slots) }
