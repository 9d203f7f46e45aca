package notify

import (
	"context"
	"fmt"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// The agent register, results, once-approval lookup and counters pass to
// the inner log, so code that reaches them by type assertion on the
// audit.Log (log.(audit.Agents)) finds them through the decorator too.
var (
	_ audit.Agents        = (*Log)(nil)
	_ audit.Results       = (*Log)(nil)
	_ audit.OnceApprovals = (*Log)(nil)
	_ audit.Counters      = (*Log)(nil)
)

func (l *Log) lacks(what string) error {
	return fmt.Errorf("the decision log beneath the notifier (%T) keeps no %s", l.Log, what)
}

// AddAgent is the inner log's.
func (l *Log) AddAgent(ctx context.Context, r *audit.AgentRecord) error {
	if a, ok := l.Log.(audit.Agents); ok {
		return a.AddAgent(ctx, r)
	}
	return l.lacks("agents")
}

// ListAgents is the inner log's.
func (l *Log) ListAgents(ctx context.Context) ([]audit.AgentRecord, error) {
	if a, ok := l.Log.(audit.Agents); ok {
		return a.ListAgents(ctx)
	}
	return nil, l.lacks("agents")
}

// RevokeAgent is the inner log's.
func (l *Log) RevokeAgent(ctx context.Context, name string, at time.Time) error {
	if a, ok := l.Log.(audit.Agents); ok {
		return a.RevokeAgent(ctx, name, at)
	}
	return l.lacks("agents")
}

// AgentByCredential is the inner log's.
func (l *Log) AgentByCredential(ctx context.Context, sha256hex string) (*audit.AgentRecord, error) {
	if a, ok := l.Log.(audit.Agents); ok {
		return a.AgentByCredential(ctx, sha256hex)
	}
	return nil, l.lacks("agents")
}

// RecordResult is the inner log's.
func (l *Log) RecordResult(ctx context.Context, r *audit.Result) error {
	if rs, ok := l.Log.(audit.Results); ok {
		return rs.RecordResult(ctx, r)
	}
	return l.lacks("results")
}

// ResultsFor is the inner log's.
func (l *Log) ResultsFor(ctx context.Context, decisionID string) ([]audit.Result, error) {
	if rs, ok := l.Log.(audit.Results); ok {
		return rs.ResultsFor(ctx, decisionID)
	}
	return nil, l.lacks("results")
}

// OnceApprovalFor is the inner log's.
func (l *Log) OnceApprovalFor(ctx context.Context, agent, toolName, argumentsHash string, now time.Time) (*audit.Approval, error) {
	if o, ok := l.Log.(audit.OnceApprovals); ok {
		return o.OnceApprovalFor(ctx, agent, toolName, argumentsHash, now)
	}
	return nil, l.lacks("once-approval index")
}

// Add is the inner log's.
func (l *Log) Add(ctx context.Context, key string, window time.Time, n int64) (int64, error) {
	if c, ok := l.Log.(audit.Counters); ok {
		return c.Add(ctx, key, window, n)
	}
	return 0, l.lacks("counters")
}
