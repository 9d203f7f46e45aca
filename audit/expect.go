package audit

import (
	"context"
	"sync/atomic"
)

// An Expecter is a Log whose writes share commits. Expect tells it that a
// Record is coming (a gate call has begun judging), so a commit may wait
// a moment for that Record instead of leaving it to the next commit: under
// concurrent calls, fewer and larger commits. Logs that commit each write
// alone need not implement it.
type Expecter interface {
	Expect() *Expectation
}

// An Expectation is met once: when the Record it announced is queued
// (Record finds it in its context, see WithExpectation), or by Done when
// the call will not record after all. A nil Expectation is never waited
// for.
type Expectation struct {
	met  atomic.Bool
	meet func()
}

// NewExpectation returns an Expectation that calls meet when it is met.
func NewExpectation(meet func()) *Expectation { return &Expectation{meet: meet} }

// Done meets the expectation; calls after the first do nothing.
func (e *Expectation) Done() {
	if e != nil && e.met.CompareAndSwap(false, true) {
		e.meet()
	}
}

type expectationKey struct{}

// WithExpectation hands e to the Record made with the returned context.
func WithExpectation(ctx context.Context, e *Expectation) context.Context {
	if e == nil {
		return ctx
	}
	return context.WithValue(ctx, expectationKey{}, e)
}

// ExpectationFrom returns the Expectation ctx carries, or nil.
func ExpectationFrom(ctx context.Context) *Expectation {
	e, _ := ctx.Value(expectationKey{}).(*Expectation)
	return e
}
