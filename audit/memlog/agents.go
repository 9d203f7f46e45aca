package memlog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

var (
	_ audit.Agents        = (*Log)(nil)
	_ audit.Results       = (*Log)(nil)
	_ audit.OnceApprovals = (*Log)(nil)
	_ audit.Counters      = (*Log)(nil)
)

// agentState is the register of agents, the results and the counters,
// kept with the log (state.mu guards it).
type agentState struct {
	agents     []auditchain.AgentRow
	agentNamed map[string]int // name → index
	agentCred  map[string]int // credential sha256 → index
	revs       []auditchain.RevocationRow
	revoked    map[string]int // name → index of its revocation
	results    []auditchain.ResultRow
	resultsFor map[string][]int // decision_id → indexes
	onceKeys   []auditchain.OnceKey
	onceBy     map[[2]string][]int // (tool_name, arguments_hash) → indexes
	counters   map[counterRef]int64
}

type counterRef struct {
	key    string
	window int64
}

func newAgentState() agentState {
	return agentState{agentNamed: map[string]int{}, agentCred: map[string]int{}, revoked: map[string]int{},
		resultsFor: map[string][]int{}, onceBy: map[[2]string][]int{}, counters: map[counterRef]int64{}}
}

// AddAgent stores a new agent and its chain entry (audit.Agents).
func (l *Log) AddAgent(_ context.Context, r *audit.AgentRecord) error {
	if err := l.check(true); err != nil {
		return err
	}
	if err := r.CheckAgent(l.now()); err != nil {
		return err
	}
	body, err := auditchain.AgentBody(r)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	if _, taken := l.agentNamed[r.Name]; taken {
		return fmt.Errorf("%w: %q (revoked names are not reused)", audit.ErrAgentExists, r.Name)
	}
	if _, taken := l.agentCred[r.CredentialSHA256]; taken {
		return fmt.Errorf("%w: credential_sha256 is another agent's; make a new credential", audit.ErrInvalidAgent)
	}
	row := auditchain.AgentColumns(r, body)
	row.Seq = int64(len(l.agents) + 1)
	l.agentNamed[row.Name], l.agentCred[row.CredentialSHA256] = len(l.agents), len(l.agents)
	l.agents = append(l.agents, row)
	l.chain(auditchain.TableAgents, row.Seq, row.Payload())
	return nil
}

// ListAgents lists every agent by name, revoked ones included.
func (l *Log) ListAgents(context.Context) ([]audit.AgentRecord, error) {
	if err := l.check(false); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]audit.AgentRecord, 0, len(l.agents))
	for i := range l.agents {
		r, err := l.agentAt(i)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b audit.AgentRecord) int { return compare(a.Name, b.Name) })
	return out, nil
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// agentAt is agent i with its revocation. The caller holds mu.
func (s *state) agentAt(i int) (*audit.AgentRecord, error) {
	r, err := auditchain.DecodeAgent(s.agents[i].Body)
	if err != nil {
		return nil, err
	}
	if k, ok := s.revoked[r.Name]; ok {
		r.RevokedAt = time.Unix(0, s.revs[k].RevokedNS).UTC()
	}
	return r, nil
}

// RevokeAgent revokes the named agent at at (audit.ErrNotFound when
// none; revoking twice keeps the first time).
func (l *Log) RevokeAgent(_ context.Context, name string, at time.Time) error {
	if err := l.check(true); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	if _, ok := l.agentNamed[name]; !ok {
		return fmt.Errorf("%w: no agent %q; list them with `ewp-audit agents list`", audit.ErrNotFound, name)
	}
	if _, done := l.revoked[name]; done {
		return nil
	}
	if at.IsZero() {
		at = l.now()
	}
	row := auditchain.RevocationRow{Seq: int64(len(l.revs) + 1), Name: name, RevokedNS: at.UnixNano()}
	l.revoked[name] = len(l.revs)
	l.revs = append(l.revs, row)
	l.chain(auditchain.TableRevocations, row.Seq, row.Payload())
	return nil
}

// AgentByCredential finds the live agent whose credential hashes to
// sha256hex (audit.ErrNotFound for an unknown or revoked one).
func (l *Log) AgentByCredential(_ context.Context, sha256hex string) (*audit.AgentRecord, error) {
	if err := l.check(false); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.agentCred[sha256hex]
	if !ok {
		return nil, fmt.Errorf("%w: no agent has this credential", audit.ErrNotFound)
	}
	r, err := l.agentAt(i)
	if err != nil {
		return nil, err
	}
	if !r.RevokedAt.IsZero() {
		return nil, fmt.Errorf("%w: agent %q was revoked at %s", audit.ErrNotFound, r.Name, r.RevokedAt.Format(time.RFC3339))
	}
	return r, nil
}

// RecordResult records what a forwarded call did, an entry of the chain
// after its decision's (audit.ErrNotFound when the decision is not on
// record).
func (l *Log) RecordResult(_ context.Context, r *audit.Result) error {
	if err := l.check(true); err != nil {
		return err
	}
	if err := r.CheckResult(l.now()); err != nil {
		return err
	}
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	row := auditchain.ResultColumns(r, body)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	if _, ok := l.byID[row.DecisionID]; !ok {
		return fmt.Errorf("%w: no decision %s to record a result for", audit.ErrNotFound, r.DecisionID)
	}
	row.Seq = int64(len(l.results) + 1)
	l.resultsFor[row.DecisionID] = append(l.resultsFor[row.DecisionID], len(l.results))
	l.results = append(l.results, row)
	l.chain(auditchain.TableResults, row.Seq, row.Payload())
	return nil
}

// ResultsFor lists the results recorded for a decision, oldest first.
func (l *Log) ResultsFor(_ context.Context, decisionID string) ([]audit.Result, error) {
	if err := l.check(false); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []audit.Result
	for _, i := range l.resultsFor[auditchain.AsJSON(decisionID)] {
		r, err := auditchain.DecodeResult(l.results[i].Body)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, nil
}

// OnceApprovalFor finds the newest approved, unexpired, unused once
// approval for agent, toolName and argumentsHash (audit.OnceApprovals).
func (l *Log) OnceApprovalFor(_ context.Context, agent, toolName, argumentsHash string, now time.Time) (*audit.Approval, error) {
	if err := l.check(false); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := l.onceBy[[2]string{auditchain.AsJSON(toolName), auditchain.AsJSON(argumentsHash)}]
	for n, j := 0, len(keys)-1; j >= 0 && n < auditchain.MaxOnceCandidates; j-- {
		k := l.onceKeys[keys[j]]
		if _, used := l.use[k.ApprovalID]; used || !(k.AnyAgent || k.Agent == auditchain.AsJSON(agent)) {
			continue
		}
		n++
		a, err := auditchain.DecodeApproval(l.approvals[l.approval[k.ApprovalID]].Body)
		if err != nil {
			return nil, err
		}
		if auditchain.OnceFits(a, agent, toolName, argumentsHash, now) {
			return a, nil
		}
	}
	return nil, auditchain.NoOnceApproval(agent, toolName)
}

// addOnceKey indexes approval a, stored as row seq, when OnceApprovalFor
// can find it. The caller holds mu.
func (s *state) addOnceKey(a *audit.Approval, seq int64) {
	k, ok := auditchain.OnceKeyOf(a, seq)
	if !ok {
		return
	}
	ref := [2]string{k.ToolName, k.ArgumentsHash}
	s.onceBy[ref] = append(s.onceBy[ref], len(s.onceKeys))
	s.onceKeys = append(s.onceKeys, k)
}

// Add adds n to the count under key in window (audit.Counters).
func (l *Log) Add(_ context.Context, key string, window time.Time, n int64) (int64, error) {
	if err := l.check(true); err != nil {
		return 0, err
	}
	if err := audit.CheckCounter(key, n); err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ref := counterRef{key, window.UnixNano()}
	l.counters[ref] += n
	return l.counters[ref], nil
}
