// Package memlog is an in-memory audit.Log: the decision log for tests and
// for ewp-mcp --demo, where nothing should outlive the process. It keeps
// the contract of a real store — records are copied in and out as JSON
// (so a caller can never change what was recorded), idempotency keys are
// unique per credential, a single-use approval is used exactly once and
// only with the decision that used it — and writes the very chain the
// SQLite and PostgreSQL logs write (package auditchain: the same rows,
// payloads and numbering), so one history has one head on all three; it
// is held to the same suite (audit/audittest). Nothing is durable.
package memlog

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

// Log is a handle on an in-memory decision log, safe for concurrent use.
// Handle gives more handles on the same log.
type Log struct {
	now func() time.Time
	ro  bool
	*state

	closeMu sync.Mutex
	closed  bool
}

// state is the log itself, shared by its handles. Keys of the maps are
// ids in the form the JSON bodies read back as (auditchain.AsJSON), as
// the stores' columns are.
type state struct {
	mu        sync.Mutex
	decisions []auditchain.DecisionRow // by seq - 1
	byID      map[string]int           // decision_id → index
	byKey     map[keyRef]int           // (credential, idempotency key) → index
	approvals []auditchain.ApprovalRow
	approval  map[string]int // approval_id → index
	answer    map[string]int // decision_id → index of the approval answering it
	uses      []auditchain.Use
	use       map[string]int // approval_id → index
	events    []event
	writes    int64
	agentState
}

type keyRef struct{ credential, key string }

// event is one chain entry.
type event struct {
	table      string
	rowSeq     int64
	payload    []byte
	prev, hash []byte
}

var _ audit.Log = (*Log)(nil)

// New returns an empty log. now is its clock, which stamps decisions,
// approvals and uses recorded without a time (nil: time.Now).
func New(now func() time.Time) *Log {
	if now == nil {
		now = time.Now
	}
	return &Log{now: now, state: &state{byID: map[string]int{}, byKey: map[keyRef]int{},
		approval: map[string]int{}, answer: map[string]int{}, use: map[string]int{}, agentState: newAgentState()}}
}

// Handle returns another handle on the same log (as another process
// would open the same file), read-only when asked; closing one handle
// leaves the others open.
func (l *Log) Handle(readOnly bool) *Log {
	return &Log{now: l.now, ro: readOnly, state: l.state}
}

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("memlog: log is closed")

// ErrReadOnly is returned by the writes of a read-only handle.
var ErrReadOnly = errors.New("memlog: the handle is read-only")

func (l *Log) check(write bool) error {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	switch {
	case l.closed:
		return ErrClosed
	case write && l.ro:
		return ErrReadOnly
	}
	return nil
}

// Record stores d and its chain entry. It fills d.ID and d.Time (the
// log's clock) when empty. A decision_id already recorded is refused, and
// so is an idempotency key its caller's credential already used
// (audit.ErrDuplicateKey).
func (l *Log) Record(_ context.Context, d *audit.Decision) error {
	if err := l.check(true); err != nil {
		return err
	}
	r, err := auditchain.PrepareRecord(d, l.now, audit.NewID)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	if err := l.taken(&r.Row); err != nil {
		return err
	}
	l.addDecision(r.Row)
	return nil
}

// RecordUse records d, a MAY_ACT decision the single-use approval
// d.ApprovalID lifted, and the approval's use by d, together
// (audit.Log.RecordUse): the decision's entry, then the use's. It refuses,
// recording nothing, what Record refuses, a decision that is not MAY_ACT,
// an unknown approval (audit.ErrNotFound), one already used
// (audit.ErrApprovalUsed) and what audit.Approval.Consumable refuses at
// the log's clock.
func (l *Log) RecordUse(_ context.Context, d *audit.Decision) error {
	if err := l.check(true); err != nil {
		return err
	}
	if err := auditchain.CheckUse(d); err != nil {
		return err
	}
	r, err := auditchain.PrepareRecord(d, l.now, audit.NewID)
	if err != nil {
		return err
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	u, err := l.usable(r.Row.ApprovalID, now)
	if err != nil {
		return err
	}
	if err := l.taken(&r.Row); err != nil {
		return err
	}
	l.addDecision(r.Row)
	u.UsedBy, u.Seq = r.Row.DecisionID, int64(len(l.uses)+1)
	l.use[u.ApprovalID] = len(l.uses)
	l.uses = append(l.uses, u)
	l.chain(auditchain.TableUses, u.Seq, u.Payload())
	return nil
}

// usable is the use of approval id (in JSON form) at now, when it can be
// used. The caller holds mu.
func (s *state) usable(id string, now time.Time) (auditchain.Use, error) {
	i, ok := s.approval[id]
	if !ok {
		return auditchain.Use{}, fmt.Errorf("%w: no approval %s in this log", audit.ErrNotFound, id)
	}
	a, err := auditchain.DecodeApproval(s.approvals[i].Body)
	if err != nil {
		return auditchain.Use{}, err
	}
	if err := a.Consumable(now); err != nil {
		return auditchain.Use{}, err
	}
	if k, used := s.use[id]; used {
		return auditchain.Use{}, auditchain.Used(id, s.uses[k].UsedBy)
	}
	return auditchain.Use{ApprovalID: id, UsedNS: now.UnixNano()}, nil
}

// taken refuses a decision whose id or idempotency key is on record, in
// the words of the stores. The caller holds mu.
func (s *state) taken(r *auditchain.DecisionRow) error {
	if _, dup := s.byID[r.DecisionID]; dup {
		return fmt.Errorf("decision %s is already recorded; every call gets a new decision_id", r.DecisionID)
	}
	if _, dup := s.byKey[keyRef{r.Credential, r.IdemKey.String}]; r.IdemKey.Valid && dup {
		return fmt.Errorf("%w: credential %q already recorded a decision under idempotency_key %q; fetch it with ByIdempotencyKey",
			audit.ErrDuplicateKey, r.Credential, r.IdemKey.String)
	}
	return nil
}

// addDecision numbers r, keeps it (its body is a copy: PrepareRecord
// wrote it afresh) and chains it. The caller holds mu.
func (s *state) addDecision(r auditchain.DecisionRow) {
	r.Seq = int64(len(s.decisions) + 1)
	s.byID[r.DecisionID] = len(s.decisions)
	if r.IdemKey.Valid {
		s.byKey[keyRef{r.Credential, r.IdemKey.String}] = len(s.decisions)
	}
	s.decisions = append(s.decisions, r)
	s.chain(auditchain.TableDecisions, r.Seq, r.Payload())
}

// chain appends the entry recording row rowSeq of table. The caller holds
// mu.
func (s *state) chain(table string, rowSeq int64, payload []byte) {
	prev := auditchain.Genesis()
	if n := len(s.events); n > 0 {
		prev = s.events[n-1].hash
	}
	s.events = append(s.events, event{table: table, rowSeq: rowSeq, payload: payload, prev: prev, hash: auditchain.Hash(prev, payload)})
}

// Decision returns the decision recorded as id, or audit.ErrNotFound.
func (l *Log) Decision(_ context.Context, id string) (*audit.Decision, error) {
	if err := l.check(false); err != nil {
		return nil, err
	}
	l.mu.Lock()
	i, ok := l.byID[auditchain.AsJSON(id)]
	l.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("decision %q: %w", id, audit.ErrNotFound)
	}
	return l.decisionAt(i)
}

func (s *state) decisionAt(i int) (*audit.Decision, error) {
	s.mu.Lock()
	body := s.decisions[i].Body
	s.mu.Unlock()
	return auditchain.DecodeDecision(body)
}

// ByIdempotencyKey returns the decision recorded under (credential, key).
func (l *Log) ByIdempotencyKey(_ context.Context, credential, key string) (*audit.Decision, error) {
	if err := l.check(false); err != nil {
		return nil, err
	}
	l.mu.Lock()
	i, ok := l.byKey[keyRef{auditchain.AsJSON(credential), auditchain.AsJSON(key)}]
	l.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("idempotency key %q: %w", key, audit.ErrNotFound)
	}
	return l.decisionAt(i)
}

// List returns the decisions f selects, in record order; a zero Limit
// means auditchain.DefaultLimit.
func (l *Log) List(ctx context.Context, f audit.Filter) ([]audit.Decision, error) {
	if f.Limit <= 0 {
		f.Limit = auditchain.DefaultLimit
	}
	var out []audit.Decision
	err := l.Each(ctx, auditchain.Query{Filter: f}, func(d *audit.Decision) error {
		out = append(out, *d)
		return nil
	})
	return out, err
}

// Each calls fn with every decision q selects, in recording order (or
// newest first), as the stores' Each; a zero Limit means all.
func (l *Log) Each(_ context.Context, q auditchain.Query, fn func(*audit.Decision) error) error {
	if err := l.check(false); err != nil {
		return err
	}
	if q.Outcome != "" && !q.Outcome.Valid() {
		return fmt.Errorf("outcome %q: want MAY_ACT, REQUIRE_CONFIRMATION, DENY, REFUSED or ANSWERED", q.Outcome)
	}
	rows, err := l.selected(q)
	if err != nil {
		return err
	}
	for _, body := range rows {
		d, err := auditchain.DecodeDecision(body)
		if err != nil {
			return err
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	return nil
}

// selected is the bodies q selects, in its order.
func (s *state) selected(q auditchain.Query) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start, step := 0, 1
	if q.NewestFirst {
		start, step = len(s.decisions)-1, -1
	}
	if q.After != "" {
		i, ok := s.byID[auditchain.AsJSON(q.After)]
		if !ok {
			return nil, fmt.Errorf("%w: after %s: no such decision to continue from", audit.ErrNotFound, q.After)
		}
		start = i + step
	}
	var out [][]byte
	for i := start; i >= 0 && i < len(s.decisions) && (q.Limit <= 0 || len(out) < q.Limit); i += step {
		if r := &s.decisions[i]; s.selects(q, r) {
			out = append(out, r.Body)
		}
	}
	return out, nil
}

// selects applies q's filters to r. The caller holds mu.
func (s *state) selects(q auditchain.Query, r *auditchain.DecisionRow) bool {
	_, answered := s.answer[r.DecisionID]
	switch {
	case !q.Since.IsZero() && r.TimeNS < q.Since.UnixNano(),
		!q.Until.IsZero() && r.TimeNS >= q.Until.UnixNano(),
		q.Outcome != "" && r.Outcome != string(q.Outcome),
		q.PropositionID != "" && r.PropositionID != auditchain.AsJSON(q.PropositionID),
		q.ApprovalID != "" && r.ApprovalID != auditchain.AsJSON(q.ApprovalID),
		q.Pending && (r.Outcome != string(audit.OutcomeRequireConfirmation) || answered):
		return false
	}
	return true
}

// Approve records an operator's answer to a REQUIRE_CONFIRMATION decision
// under the same rule as the durable stores (audit.Approval.Admit): it
// fills a.ID, a.CreatedAt (the log's clock) and a.Action, and refuses an
// unknown decision (audit.ErrNotFound), one already answered
// (audit.ErrAnswered), one not awaiting confirmation (audit.ErrNotPending),
// a malformed approval and an approval_id already recorded
// (audit.ErrInvalidApproval).
func (l *Log) Approve(_ context.Context, a *audit.Approval) error {
	if err := l.check(true); err != nil {
		return err
	}
	if a == nil {
		return fmt.Errorf("%w: no approval given", audit.ErrInvalidApproval)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	i, ok := l.byID[auditchain.AsJSON(a.DecisionID)]
	if !ok {
		return fmt.Errorf("%w: no decision %s in this log; list pending ones with `ewp-audit list --pending`", audit.ErrNotFound, a.DecisionID)
	}
	answered, err := auditchain.DecodeDecision(l.decisions[i].Body)
	if err != nil {
		return err
	}
	var prior string
	if k, ok := l.answer[auditchain.AsJSON(a.DecisionID)]; ok {
		prior = l.approvals[k].ApprovalID
	}
	if err := a.Admit(answered, prior, l.now()); err != nil {
		return err
	}
	if _, dup := l.approval[auditchain.AsJSON(a.ID)]; dup {
		return fmt.Errorf("%w: approval %s is already recorded; every approval gets a new approval_id", audit.ErrInvalidApproval, a.ID)
	}
	body, err := json.Marshal(a)
	if err != nil {
		return err
	}
	row := auditchain.ApprovalColumns(a, body)
	row.Seq = int64(len(l.approvals) + 1)
	l.approval[row.ApprovalID] = len(l.approvals)
	l.answer[row.DecisionID] = len(l.approvals)
	l.approvals = append(l.approvals, row)
	l.chain(auditchain.TableApprovals, row.Seq, row.Payload())
	l.addOnceKey(a, row.Seq)
	return nil
}

// Approval returns the approval recorded as id, or audit.ErrNotFound.
func (l *Log) Approval(_ context.Context, id string) (*audit.Approval, error) {
	if err := l.check(false); err != nil {
		return nil, err
	}
	l.mu.Lock()
	i, ok := l.approval[auditchain.AsJSON(id)]
	var body []byte
	if ok {
		body = l.approvals[i].Body
	}
	l.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: approval %s is not in this log", audit.ErrNotFound, id)
	}
	return auditchain.DecodeApproval(body)
}

// ApprovalsFor lists the answers to decisionID (at most one: a decision
// is answered once).
func (l *Log) ApprovalsFor(ctx context.Context, decisionID string) ([]audit.Approval, error) {
	if err := l.check(false); err != nil {
		return nil, err
	}
	l.mu.Lock()
	i, ok := l.answer[auditchain.AsJSON(decisionID)]
	var id string
	if ok {
		id = l.approvals[i].ApprovalID
	}
	l.mu.Unlock()
	if !ok {
		return nil, nil
	}
	a, err := l.Approval(ctx, id)
	if err != nil {
		return nil, err
	}
	return []audit.Approval{*a}, nil
}

// UseOf returns the use of a single-use approval, or audit.ErrNotFound
// while it is unused.
func (l *Log) UseOf(_ context.Context, approvalID string) (*auditchain.Use, error) {
	if err := l.check(false); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.use[auditchain.AsJSON(approvalID)]
	if !ok {
		return nil, fmt.Errorf("%w: approval %s is unused", audit.ErrNotFound, approvalID)
	}
	u := l.uses[i]
	return &u, nil
}

// UsedBy returns the decision that used a single-use approval, if any.
// It is not part of audit.Log; tests and the demo read it.
func (l *Log) UsedBy(approvalID string) (string, bool) {
	u, err := l.UseOf(context.Background(), approvalID)
	if err != nil {
		return "", false
	}
	return u.UsedBy, true
}

// Head returns the last entry of the hash chain ({0, ""} when empty).
func (l *Log) Head(context.Context) (audit.Head, error) {
	if err := l.check(false); err != nil {
		return audit.Head{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.events)
	if n == 0 {
		return audit.Head{}, nil
	}
	return audit.Head{Seq: int64(n), Hash: hex.EncodeToString(l.events[n-1].hash)}, nil
}

// Verify walks the chain as the stores' Verify does (auditchain.Walker):
// every link, and every row against what its event recorded.
func (l *Log) Verify(ctx context.Context) (auditchain.VerifyReport, error) {
	return l.verify(nil)
}

// VerifyHead is Verify plus a check that the chain still holds want.
func (l *Log) VerifyHead(ctx context.Context, want audit.Head) (auditchain.VerifyReport, error) {
	return l.verify(&want)
}

func (l *Log) verify(want *audit.Head) (auditchain.VerifyReport, error) {
	var rep auditchain.VerifyReport
	if err := l.check(false); err != nil {
		return rep, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	w := auditchain.NewWalker(&rep, want)
	walk := func() (*auditchain.Break, error) {
		for i := range l.events {
			if brk := w.Event(l.eventAt(i)); brk != nil {
				return brk, nil
			}
		}
		return w.HeadCheck(), nil
	}
	count := func(table string) (int64, error) {
		return map[string]int64{auditchain.TableDecisions: int64(len(l.decisions)),
			auditchain.TableApprovals: int64(len(l.approvals)), auditchain.TableUses: int64(len(l.uses)),
			auditchain.TableAgents: int64(len(l.agents)), auditchain.TableRevocations: int64(len(l.revs)),
			auditchain.TableResults: int64(len(l.results))}[table], nil
	}
	first := func(string) (int64, error) { return 0, nil } // no row is ever added behind the chain here
	orphans := func() (*auditchain.Break, error) {
		return w.Orphans(append(slices.Clone(auditchain.ChainedTables), auditchain.AgentTables...), count, first)
	}
	keys := func() (*auditchain.Break, error) { return w.OnceKeys(l.onceKeys), nil }
	err := auditchain.RunChecks(&rep, func(err error) error { return err }, walk, orphans, keys)
	return rep, err
}

// eventAt is event i as a store's verify reads it, with its row. The
// caller holds mu.
func (s *state) eventAt(i int) *auditchain.Event {
	e := s.events[i]
	ev := &auditchain.Event{Seq: int64(i + 1), RowSeq: e.rowSeq, Table: e.table, Payload: string(e.payload), Prev: e.prev, Hash: e.hash}
	switch e.table {
	case auditchain.TableDecisions:
		ev.Decision = &s.decisions[e.rowSeq-1]
	case auditchain.TableApprovals:
		ev.Approval = &s.approvals[e.rowSeq-1]
	case auditchain.TableUses:
		ev.Use = &s.uses[e.rowSeq-1]
	case auditchain.TableAgents:
		ev.Row = rowAt(s.agents, e.rowSeq)
	case auditchain.TableRevocations:
		ev.Row = rowAt(s.revs, e.rowSeq)
	case auditchain.TableResults:
		ev.Row = rowAt(s.results, e.rowSeq)
	}
	return ev
}

// CommitStats counts the writes asked of the log; it commits nothing
// (nothing is stored anywhere), so commits is 0.
func (l *Log) CommitStats() (commits, writes int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return 0, l.writes
}

// Close ends this handle; later calls on it fail with ErrClosed.
func (l *Log) Close() error {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	l.closed = true
	return nil
}

// rowAt is row seq of rows, nil when there is none (a test removed it).
func rowAt[R any, P interface {
	*R
	auditchain.ChainedRow
}](rows []R, seq int64) auditchain.ChainedRow {
	if seq < 1 || seq > int64(len(rows)) {
		return nil
	}
	return P(&rows[seq-1])
}
