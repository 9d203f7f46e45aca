// Package auditsource adapts a decision log, SQLite (audit/sqlite) or
// PostgreSQL (audit/postgres), to what the console needs beyond audit.Log:
// listing newest first, the calls that presented an approval, and walking
// the chain on demand.
package auditsource

import (
	"context"
	"fmt"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/internal/plural"
)

// Extras are the console's optional decision-log functions
// (console.Config's LogVerify, ListNewest and Presented).
type Extras struct {
	LogVerify  console.LogVerifyFunc
	ListNewest func(ctx context.Context, f audit.Filter) ([]audit.Decision, error)
	Presented  func(ctx context.Context, approvalID string, limit int) ([]audit.Decision, error)
}

// For returns the extras over l when it is one of the stores (an
// auditstore.Log); a log that is not (the in-memory log of --demo) gets
// none, and the console serves its basic pages. A decorator that wraps a
// store (audit/notify's Log) is seen through by its Unwrap method.
func For(l audit.Log) Extras {
	for {
		w, ok := l.(interface{ Unwrap() audit.Log })
		if !ok {
			break
		}
		l = w.Unwrap()
	}
	sl, ok := l.(auditstore.Log)
	if !ok {
		return Extras{}
	}
	return Extras{LogVerify: Verify(sl), ListNewest: ListNewest(sl), Presented: Presented(sl)}
}

// Apply sets cfg's LogVerify, ListNewest and Presented from x.
func (x Extras) Apply(cfg *console.Config) {
	cfg.LogVerify, cfg.ListNewest, cfg.Presented = x.LogVerify, x.ListNewest, x.Presented
}

// Verify returns the console's LogVerifyFunc for l: the whole chain walked,
// summarised as `ewp-audit verify` counts it.
func Verify(l auditstore.Log) console.LogVerifyFunc {
	return func(ctx context.Context) (string, error) {
		rep, err := l.Verify(ctx)
		sum := fmt.Sprintf("%s, %s, %s, %s; head %s", plural.Count(rep.Events, "event", "events"),
			plural.Count(rep.Decisions, "decision", "decisions"), plural.Count(rep.Approvals, "approval", "approvals"),
			plural.Count(rep.Uses, "use", "uses"), rep.Head)
		return sum, err
	}
}

// ListNewest returns the console's newest-first lister for l (Config.ListNewest).
func ListNewest(l auditstore.Log) func(context.Context, audit.Filter) ([]audit.Decision, error) {
	return func(ctx context.Context, f audit.Filter) ([]audit.Decision, error) {
		return collect(ctx, l, auditchain.Query{Filter: f, NewestFirst: true})
	}
}

// Presented returns the console's lister of the decisions that presented
// an approval (Config.Presented), in recording order.
func Presented(l auditstore.Log) func(context.Context, string, int) ([]audit.Decision, error) {
	return func(ctx context.Context, approvalID string, limit int) ([]audit.Decision, error) {
		return collect(ctx, l, auditchain.Query{Filter: audit.Filter{Limit: limit}, ApprovalID: approvalID})
	}
}

func collect(ctx context.Context, l auditstore.Log, q auditchain.Query) ([]audit.Decision, error) {
	if q.Limit <= 0 {
		q.Limit = auditchain.DefaultLimit
	}
	var out []audit.Decision
	err := l.Each(ctx, q, func(d *audit.Decision) error {
		out = append(out, *d)
		return nil
	})
	return out, err
}
