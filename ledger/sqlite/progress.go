package sqlite

import "context"

type progressKey struct{}

// Progress is told how many views of a Put have been written so far.
type Progress func(done, total int)

// WithProgress returns a context whose Puts report progress to fn, for a
// progress bar on a large load. It is a context value rather than a Put
// parameter because only interactive callers want it.
func WithProgress(ctx context.Context, fn Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// progressEvery is how many views pass between two reports.
const progressEvery = 1024

func progressOf(ctx context.Context) Progress {
	fn, _ := ctx.Value(progressKey{}).(Progress)
	if fn == nil {
		return func(int, int) {}
	}
	return fn
}
