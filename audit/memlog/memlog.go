// Package memlog is an in-memory audit.Log: the decision log for tests and
// for ewp-mcp --demo, where nothing should outlive the process. It keeps
// the contract of a real store — records are copied in and out as JSON
// (so a caller can never change what was recorded), idempotency keys are
// unique per credential, a single-use approval is consumed exactly once,
// and every entry extends a sha256 hash chain whose Head it reports — but
// nothing is durable.
package memlog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// Log is an in-memory audit.Log, safe for concurrent use.
type Log struct {
	now func() time.Time

	mu        sync.Mutex
	closed    bool
	decisions map[string][]byte // decision_id → JSON
	order     []string          // decision ids in record order
	byKey     map[keyRef]string // (credential, idempotency key) → decision_id
	approvals map[string][]byte // approval_id → JSON
	answers   map[string][]string
	used      map[string]string // single-use approval_id → the decision that used it
	head      audit.Head
}

type keyRef struct{ credential, key string }

var _ audit.Log = (*Log)(nil)

// New returns an empty log. now stamps approvals recorded without a
// CreatedAt (nil: time.Now).
func New(now func() time.Time) *Log {
	if now == nil {
		now = time.Now
	}
	return &Log{now: now, decisions: map[string][]byte{}, byKey: map[keyRef]string{},
		approvals: map[string][]byte{}, answers: map[string][]string{}, used: map[string]string{}}
}

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("memlog: log is closed")

// Record stores d. Its ID must be new; its idempotency key, when set, must
// be new for its caller's credential (audit.ErrDuplicateKey otherwise).
func (l *Log) Record(_ context.Context, d *audit.Decision) error {
	if d == nil || d.ID == "" {
		return errors.New("memlog: a decision needs its decision_id")
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("memlog: encode decision %s: %w", d.ID, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if _, dup := l.decisions[d.ID]; dup {
		return fmt.Errorf("memlog: decision %s is already recorded", d.ID)
	}
	k := keyRef{d.Caller.Credential, d.IdempotencyKey}
	if d.IdempotencyKey != "" {
		if _, dup := l.byKey[k]; dup {
			return audit.ErrDuplicateKey
		}
		l.byKey[k] = d.ID
	}
	l.decisions[d.ID] = b
	l.order = append(l.order, d.ID)
	l.chain("decision", b)
	return nil
}

// chain appends an entry to the hash chain: hash = sha256(prev hash, kind,
// body). The caller holds mu.
func (l *Log) chain(kind string, body []byte) {
	h := sha256.New()
	h.Write([]byte(l.head.Hash))
	h.Write([]byte{0})
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write(body)
	l.head = audit.Head{Seq: l.head.Seq + 1, Hash: hex.EncodeToString(h.Sum(nil))}
}

// Decision returns the decision recorded as id, or audit.ErrNotFound.
func (l *Log) Decision(_ context.Context, id string) (*audit.Decision, error) {
	l.mu.Lock()
	b, ok := l.decisions[id]
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if !ok {
		return nil, fmt.Errorf("decision %q: %w", id, audit.ErrNotFound)
	}
	return decodeDecision(b)
}

func decodeDecision(b []byte) (*audit.Decision, error) {
	var d audit.Decision
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("memlog: decode decision: %w", err)
	}
	return &d, nil
}

// ByIdempotencyKey returns the decision recorded under (credential, key).
func (l *Log) ByIdempotencyKey(ctx context.Context, credential, key string) (*audit.Decision, error) {
	l.mu.Lock()
	id, ok := l.byKey[keyRef{credential, key}]
	l.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("idempotency key %q: %w", key, audit.ErrNotFound)
	}
	return l.Decision(ctx, id)
}

// List returns the decisions f selects, in record order.
func (l *Log) List(_ context.Context, f audit.Filter) ([]audit.Decision, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	start := 0
	if f.After != "" {
		for i, id := range l.order {
			if id == f.After {
				start = i + 1
			}
		}
	}
	var out []audit.Decision
	for _, id := range l.order[start:] {
		d, err := decodeDecision(l.decisions[id])
		if err != nil {
			return nil, err
		}
		if !l.selects(f, d) {
			continue
		}
		out = append(out, *d)
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out, nil
}

// selects applies f to d. The caller holds mu.
func (l *Log) selects(f audit.Filter, d *audit.Decision) bool {
	switch {
	case !f.Since.IsZero() && d.Time.Before(f.Since),
		!f.Until.IsZero() && d.Time.After(f.Until),
		f.Outcome != "" && d.Outcome != f.Outcome,
		f.PropositionID != "" && d.PropositionID != f.PropositionID:
		return false
	case f.Pending:
		return d.Outcome == audit.OutcomeRequireConfirmation && len(l.answers[d.ID]) == 0
	}
	return true
}

// Approve records an operator's answer to a REQUIRE_CONFIRMATION decision
// under the same rule as the durable store (audit.Approval.Admit): it
// fills a.ID, a.CreatedAt (the log's clock) and a.Action, and refuses an
// unknown decision (audit.ErrNotFound), one already answered
// (audit.ErrAnswered), one not awaiting confirmation (audit.ErrNotPending)
// and a malformed approval (audit.ErrInvalidApproval).
func (l *Log) Approve(_ context.Context, a *audit.Approval) error {
	if a == nil {
		return fmt.Errorf("%w: no approval given", audit.ErrInvalidApproval)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	b, ok := l.decisions[a.DecisionID]
	if !ok {
		return fmt.Errorf("%w: no decision %s in this log", audit.ErrNotFound, a.DecisionID)
	}
	answered, err := decodeDecision(b)
	if err != nil {
		return err
	}
	var prior string
	if prev := l.answers[a.DecisionID]; len(prev) > 0 {
		prior = prev[0]
	}
	if err := a.Admit(answered, prior, l.now()); err != nil {
		return err
	}
	if _, dup := l.approvals[a.ID]; dup {
		return fmt.Errorf("memlog: approval %s is already recorded", a.ID)
	}
	if b, err = json.Marshal(a); err != nil {
		return err
	}
	l.approvals[a.ID] = b
	l.answers[a.DecisionID] = append(l.answers[a.DecisionID], a.ID)
	l.chain("approval", b)
	return nil
}

// Approval returns the approval recorded as id, or audit.ErrNotFound.
func (l *Log) Approval(_ context.Context, id string) (*audit.Approval, error) {
	l.mu.Lock()
	b, ok := l.approvals[id]
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if !ok {
		return nil, fmt.Errorf("approval %q: %w", id, audit.ErrNotFound)
	}
	var a audit.Approval
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// ApprovalsFor lists the answers to decisionID, oldest first.
func (l *Log) ApprovalsFor(ctx context.Context, decisionID string) ([]audit.Approval, error) {
	l.mu.Lock()
	ids := append([]string(nil), l.answers[decisionID]...)
	l.mu.Unlock()
	out := make([]audit.Approval, 0, len(ids))
	for _, id := range ids {
		a, err := l.Approval(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// Consume marks the single-use approval used by decision usedBy; of
// concurrent calls exactly one succeeds, the rest get audit.ErrApprovalUsed.
// It refuses what the durable store refuses (audit.Approval.Consumable:
// a rejection, an expired approval by the log's clock, a scope approval).
// usedBy need not be recorded yet: the server consumes before it records
// the decision that the approval lifted.
func (l *Log) Consume(ctx context.Context, approvalID, usedBy string) error {
	a, err := l.Approval(ctx, approvalID)
	if err != nil {
		return err
	}
	if err := a.Consumable(l.now()); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if by, ok := l.used[approvalID]; ok {
		return &audit.CoverageError{ApprovalID: approvalID, Reason: audit.ErrApprovalUsed,
			Detail: fmt.Sprintf("a once approval was already used by decision %s", by)}
	}
	l.used[approvalID] = usedBy
	b, _ := json.Marshal(map[string]string{"approval_id": approvalID, "used_by": usedBy}) // two strings
	l.chain("use", b)
	return nil
}

// UsedBy returns the decision that consumed a single-use approval, if any.
// It is not part of audit.Log; tests and the demo read it.
func (l *Log) UsedBy(approvalID string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	by, ok := l.used[approvalID]
	return by, ok
}

// Head returns the last entry of the hash chain ({0, ""} when empty).
func (l *Log) Head(context.Context) (audit.Head, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head, nil
}

// Close ends the log; later calls fail with ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return nil
}
