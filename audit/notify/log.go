package notify

import (
	"context"

	"github.com/ewp-go/ewp/audit"
)

// Log is an audit.Log that notifies: after its inner log recorded a
// REQUIRE_CONFIRMATION decision, the decision is queued for the webhook.
// A Record that failed notifies nothing (the decision is not on record,
// and the agent is refused). Every other method is the inner log's.
type Log struct {
	audit.Log
	n *Notifier
}

// Wrap returns l notifying through n; Close closes both.
func Wrap(l audit.Log, n *Notifier) *Log { return &Log{Log: l, n: n} }

// Record records d, then queues its notice without waiting.
func (l *Log) Record(ctx context.Context, d *audit.Decision) error {
	if err := l.Log.Record(ctx, d); err != nil {
		return err
	}
	if d.Outcome == audit.OutcomeRequireConfirmation {
		cp := *d // the caller may reuse d; the worker reads it later
		l.n.Enqueue(&cp)
	}
	return nil
}

// Close stops the notifier, then closes the inner log.
func (l *Log) Close() error {
	l.n.Close()
	return l.Log.Close()
}

// Unwrap is the inner log, for code that needs a store's own methods
// (the console's chain walk, auditstore.Log).
func (l *Log) Unwrap() audit.Log { return l.Log }
