// Package auditsource adapts the SQLite decision log (audit/sqlite) to what
// the console needs beyond audit.Log: walking its chain on demand.
package auditsource

import (
	"context"
	"fmt"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/console"
)

// Verify returns the console's LogVerifyFunc for l: the whole chain walked,
// summarised as `ewp-audit verify` counts it.
func Verify(l *sqlite.Log) console.LogVerifyFunc {
	return func(ctx context.Context) (string, error) {
		rep, err := l.Verify(ctx)
		sum := fmt.Sprintf("%d events, %d decisions, %d approvals, %d uses; head %s", rep.Events, rep.Decisions, rep.Approvals, rep.Uses, rep.Head)
		return sum, err
	}
}

// ListNewest returns the console's newest-first lister for l (Config.ListNewest).
func ListNewest(l *sqlite.Log) func(context.Context, audit.Filter) ([]audit.Decision, error) {
	return func(ctx context.Context, f audit.Filter) ([]audit.Decision, error) {
		return collect(ctx, l, sqlite.Query{Filter: f, NewestFirst: true})
	}
}

// Presented returns the console's lister of the decisions that presented
// an approval (Config.Presented), in recording order.
func Presented(l *sqlite.Log) func(context.Context, string, int) ([]audit.Decision, error) {
	return func(ctx context.Context, approvalID string, limit int) ([]audit.Decision, error) {
		return collect(ctx, l, sqlite.Query{Filter: audit.Filter{Limit: limit}, ApprovalID: approvalID})
	}
}

func collect(ctx context.Context, l *sqlite.Log, q sqlite.Query) ([]audit.Decision, error) {
	if q.Limit <= 0 {
		q.Limit = sqlite.DefaultLimit
	}
	var out []audit.Decision
	err := l.Each(ctx, q, func(d *audit.Decision) error {
		out = append(out, *d)
		return nil
	})
	return out, err
}
