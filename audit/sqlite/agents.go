package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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

// AddAgent stores a new agent and its chain entry (audit.Agents): the
// name and the credential's sha256 are unique (audit.ErrAgentExists for
// a taken name, revoked ones included).
func (l *Log) AddAgent(ctx context.Context, r *audit.AgentRecord) error {
	if l.ro {
		return l.errReadOnly()
	}
	if err := r.CheckAgent(l.now()); err != nil {
		return err
	}
	body, err := auditchain.AgentBody(r)
	if err != nil {
		return err
	}
	row := auditchain.AgentColumns(r, body)
	err = l.wr.submit(ctx, op{fn: func(t *wtx) error {
		if err := t.agentFree(&row); err != nil {
			return err
		}
		res, err := t.tx.Exec(`INSERT INTO agents (name, credential_sha256, created_ns, body, body_sha256) VALUES (?, ?, ?, ?, ?)`,
			row.Name, row.CredentialSHA256, row.CreatedNS, row.Body, row.BodySum)
		if err != nil {
			return auditchain.InDoubt(err)
		}
		return t.chainRow(auditchain.TableAgents, res, &row)
	}})
	return l.writeErr("add agent ", r.Name, err)
}

// agentFree refuses a taken name or credential, as a refusal of that
// write alone.
func (t *wtx) agentFree(row *auditchain.AgentRow) error {
	var name, cred int
	err := t.tx.QueryRow(`SELECT (SELECT count(*) FROM agents WHERE name = ?), (SELECT count(*) FROM agents WHERE credential_sha256 = ?)`,
		row.Name, row.CredentialSHA256).Scan(&name, &cred)
	switch {
	case err != nil:
		return auditchain.InDoubt(err)
	case name > 0:
		return fmt.Errorf("%w: %q (revoked names are not reused)", audit.ErrAgentExists, row.Name)
	case cred > 0:
		return fmt.Errorf("%w: credential_sha256 is another agent's; make a new credential", audit.ErrInvalidAgent)
	}
	return nil
}

// RevokeAgent revokes the named agent at at (the log's clock when zero):
// a row of agent_revocations and its chain entry. audit.ErrNotFound when
// there is no such agent; an agent revoked already stays revoked as it was.
func (l *Log) RevokeAgent(ctx context.Context, name string, at time.Time) error {
	if l.ro {
		return l.errReadOnly()
	}
	if at.IsZero() {
		at = l.now()
	}
	err := l.wr.submit(ctx, op{fn: func(t *wtx) error {
		var agents, revoked int
		if err := t.tx.QueryRow(`SELECT (SELECT count(*) FROM agents WHERE name = ?), (SELECT count(*) FROM agent_revocations WHERE name = ?)`,
			name, name).Scan(&agents, &revoked); err != nil {
			return auditchain.InDoubt(err)
		}
		switch {
		case agents == 0:
			return fmt.Errorf("%w: no agent %q; list them with `ewp-audit agents list`", audit.ErrNotFound, name)
		case revoked > 0:
			return nil
		}
		row := auditchain.RevocationRow{Name: name, RevokedNS: at.UnixNano()}
		res, err := t.tx.Exec(`INSERT INTO agent_revocations (name, revoked_ns) VALUES (?, ?)`, row.Name, row.RevokedNS)
		if err != nil {
			return auditchain.InDoubt(err)
		}
		return t.chainRow(auditchain.TableRevocations, res, &row)
	}})
	return l.writeErr("revoke agent ", name, err)
}

// ListAgents lists every agent by name, revoked ones with their
// revocation time.
func (l *Log) ListAgents(ctx context.Context) ([]audit.AgentRecord, error) {
	rows, err := l.r.QueryContext(ctx, `SELECT a.body, r.revoked_ns FROM agents a LEFT JOIN agent_revocations r ON r.name = a.name ORDER BY a.name`)
	if err != nil {
		return nil, l.storeErr("list agents", err)
	}
	defer rows.Close()
	var out []audit.AgentRecord
	for rows.Next() {
		var body []byte
		var revoked sql.NullInt64
		if err := rows.Scan(&body, &revoked); err != nil {
			return nil, l.storeErr("list agents", err)
		}
		r, err := auditchain.DecodeAgent(body)
		if err != nil {
			return nil, err
		}
		if revoked.Valid {
			r.RevokedAt = time.Unix(0, revoked.Int64).UTC()
		}
		out = append(out, *r)
	}
	return out, l.storeErr("list agents", rows.Err())
}

// AgentByCredential finds the live agent whose credential hashes to
// sha256hex: read as its chain event recorded it (auditchain.ChainedAgent),
// and refused (audit.ErrNotFound) when unknown or revoked — a revocation
// its row or only its chain event records. Nothing caches it: a
// revocation holds from the next lookup.
func (l *Log) AgentByCredential(ctx context.Context, sha256hex string) (*audit.AgentRecord, error) {
	var row auditchain.AgentRow
	var payload sql.NullString
	var prev, hash []byte
	err := l.r.QueryRowContext(ctx, `SELECT a.seq, a.name, a.credential_sha256, a.created_ns, a.body, a.body_sha256, e.payload, e.prev_hash, e.hash
		FROM agents a LEFT JOIN events e ON e.tbl = 'agents' AND e.row_seq = a.seq
		WHERE a.credential_sha256 = ? ORDER BY e.seq LIMIT 1`, sha256hex).
		Scan(&row.Seq, &row.Name, &row.CredentialSHA256, &row.CreatedNS, &row.Body, &row.BodySum, &payload, &prev, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: no agent has this credential", audit.ErrNotFound)
	}
	if err != nil {
		return nil, l.storeErr("read agent", err)
	}
	r, err := auditchain.ChainedAgent(&row, auditchain.ChainEntry{Found: payload.Valid, Payload: payload.String, Prev: prev, Hash: hash})
	if err != nil {
		return nil, err
	}
	var revoked int
	err = l.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM agent_revocations WHERE name = ?)
		+ (SELECT count(*) FROM events WHERE tbl = 'agent_revocations' AND instr(payload, ?) = 1)`,
		row.Name, auditchain.RevocationPrefix(row.Name)).Scan(&revoked)
	if err != nil {
		return nil, l.storeErr("read agent", err)
	}
	if revoked > 0 {
		return nil, fmt.Errorf("%w: agent %q is revoked", audit.ErrNotFound, r.Name)
	}
	return r, nil
}

// RecordResult records what a forwarded call did: a row of results and
// its chain entry, after its decision's (audit.ErrNotFound when the
// decision is not on record).
func (l *Log) RecordResult(ctx context.Context, r *audit.Result) error {
	if l.ro {
		return l.errReadOnly()
	}
	if err := r.CheckResult(l.now()); err != nil {
		return err
	}
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	row := auditchain.ResultColumns(r, body)
	err = l.wr.submit(ctx, op{fn: func(t *wtx) error {
		if _, err := findDecision(t.ctx, t.tx, row.DecisionID); errors.Is(err, errNoDecision) {
			return fmt.Errorf("%w: no decision %s to record a result for", audit.ErrNotFound, r.DecisionID)
		} else if err != nil {
			return auditchain.InDoubt(err)
		}
		res, err := t.tx.Exec(`INSERT INTO results (decision_id, status, time_ns, body, body_sha256) VALUES (?, ?, ?, ?, ?)`,
			row.DecisionID, row.Status, row.TimeNS, row.Body, row.BodySum)
		if err != nil {
			return auditchain.InDoubt(err)
		}
		return t.chainRow(auditchain.TableResults, res, &row)
	}})
	return l.writeErr("record result of ", r.DecisionID, err)
}

// ResultsFor lists the results of a decision, oldest first.
func (l *Log) ResultsFor(ctx context.Context, decisionID string) ([]audit.Result, error) {
	rows, err := l.r.QueryContext(ctx, `SELECT body FROM results WHERE decision_id = ? ORDER BY seq`, asJSON(decisionID))
	if err != nil {
		return nil, l.storeErr("read results", err)
	}
	defer rows.Close()
	var out []audit.Result
	err = auditchain.EachBody(rows, auditchain.DecodeResult, func(r *audit.Result) error {
		out = append(out, *r)
		return nil
	}, func(err error) error { return l.storeErr("read results", err) })
	return out, err
}

// writeOnceKey indexes approval a, stored as row seq, in approval_keys
// when OnceApprovalFor can find it; inside Approve's transaction.
func (t *wtx) writeOnceKey(a *audit.Approval, seq int64) error {
	k, ok := auditchain.OnceKeyOf(a, seq)
	if !ok {
		return nil
	}
	_, err := t.tx.Exec(`INSERT INTO approval_keys (approval_seq, approval_id, agent, any_agent, tool_name, arguments_hash, until_ns) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		k.ApprovalSeq, k.ApprovalID, k.Agent, k.AnyAgent, k.ToolName, k.ArgumentsHash, k.UntilNS)
	if err != nil {
		return auditchain.InDoubt(err)
	}
	return nil
}

// onceSQL finds the candidates of OnceApprovalFor through
// approval_keys_call: the keys of one tool and arguments hash, newest
// first, of the agent or any agent, unexpired, without a use.
const onceSQL = `SELECT k.approval_id FROM approval_keys k
	WHERE k.tool_name = ? AND k.arguments_hash = ? AND (k.any_agent = 1 OR k.agent = ?) AND (k.until_ns = 0 OR k.until_ns > ?)
	AND NOT EXISTS (SELECT 1 FROM approval_uses u WHERE u.approval_id = k.approval_id)
	ORDER BY k.approval_seq DESC LIMIT ?`

// OnceApprovalFor finds the newest approved, unexpired, unused once
// approval for agent, toolName and argumentsHash (audit.OnceApprovals),
// read as its chain event recorded it and checked again
// (auditchain.OnceFits); audit.ErrNotFound when none. RecordUse is still
// the atomic step that uses it.
func (l *Log) OnceApprovalFor(ctx context.Context, agent, toolName, argumentsHash string, now time.Time) (*audit.Approval, error) {
	rows, err := l.r.QueryContext(ctx, onceSQL, asJSON(toolName), asJSON(argumentsHash), asJSON(agent), now.UnixNano(), auditchain.MaxOnceCandidates)
	if err != nil {
		return nil, l.storeErr("find a once approval", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, l.storeErr("find a once approval", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, l.storeErr("find a once approval", err)
	}
	for _, id := range ids {
		a, err := l.Approval(ctx, id)
		if err != nil {
			return nil, err
		}
		if auditchain.OnceFits(a, agent, toolName, argumentsHash, now) {
			return a, nil
		}
	}
	return nil, auditchain.NoOnceApproval(agent, toolName)
}

// Add adds n to the count under key in the window starting at window and
// returns the new count (audit.Counters): one upsert through the writer,
// committed before it returns, so it survives a restart and processes
// sharing the file count together. Counters are not chained.
func (l *Log) Add(ctx context.Context, key string, window time.Time, n int64) (int64, error) {
	if l.ro {
		return 0, l.errReadOnly()
	}
	if err := audit.CheckCounter(key, n); err != nil {
		return 0, err
	}
	var count int64
	err := l.wr.submit(ctx, op{fn: func(t *wtx) error {
		err := t.tx.QueryRow(`INSERT INTO counters (key, window_ns, n) VALUES (?, ?, ?)
			ON CONFLICT (key, window_ns) DO UPDATE SET n = n + excluded.n RETURNING n`, key, window.UnixNano(), n).Scan(&count)
		if err != nil {
			return auditchain.InDoubt(err)
		}
		return nil
	}})
	return count, l.writeErr("count ", key, err)
}

// chainRow appends the chain entry of the row res inserted (its seq),
// whose payload is row's.
func (t *wtx) chainRow(tbl string, res sql.Result, row auditchain.ChainedRow) error {
	seq, err := res.LastInsertId()
	if err != nil {
		return auditchain.InDoubt(err)
	}
	pre, post := splitPayload(row.Payload()) // its Seq is still 0
	return t.event(tbl, seq, pre, post)
}
