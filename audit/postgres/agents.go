package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
)

var (
	_ audit.Agents        = (*Log)(nil)
	_ audit.Results       = (*Log)(nil)
	_ audit.OnceApprovals = (*Log)(nil)
	_ audit.Counters      = (*Log)(nil)
)

// AddAgent stores a new agent and its chain entry (audit.Agents), holding
// the chain lock: the name and the credential's sha256 are unique across
// every process (audit.ErrAgentExists for a taken name, revoked ones
// included). Only the operators' role may (Init's grants).
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
	err = l.wr.submit(ctx, &op{run: func(t *wtx) error {
		var name, cred bool
		if err := t.tx.QueryRow(t.ctx, `SELECT EXISTS (SELECT 1 FROM ewp_audit.agents WHERE name = $1), EXISTS (SELECT 1 FROM ewp_audit.agents WHERE credential_sha256 = $2)`,
			row.Name, row.CredentialSHA256).Scan(&name, &cred); err != nil {
			return auditchain.InDoubt(err)
		}
		switch {
		case name:
			return fmt.Errorf("%w: %q (revoked names are not reused)", audit.ErrAgentExists, row.Name)
		case cred:
			return fmt.Errorf("%w: credential_sha256 is another agent's; make a new credential", audit.ErrInvalidAgent)
		}
		return t.chainRow(auditchain.TableAgents, &row, `INSERT INTO ewp_audit.agents (seq, name, credential_sha256, created_ns, body, body_sha256)
			VALUES (`+nextSeq(auditchain.TableAgents)+`, $1, $2, $3, $4, $5) RETURNING seq`, row.Name, row.CredentialSHA256, row.CreatedNS, row.Body, row.BodySum)
	}})
	return l.writeErr("add agent ", r.Name, err)
}

// chainRow inserts a row with query (RETURNING its seq) and queues its
// chain entry, whose payload is row's.
func (t *wtx) chainRow(tbl string, row auditchain.ChainedRow, query string, args ...any) error {
	var seq int64
	if err := t.tx.QueryRow(t.ctx, query, args...).Scan(&seq); err != nil {
		return auditchain.InDoubt(err)
	}
	pre, post := auditchain.SplitPayload(row.Payload()) // its Seq is still 0
	t.event(tbl, seq, pre, post)
	return nil
}

// RevokeAgent revokes the named agent at at (the log's clock when zero):
// a row of agent_revocations and its chain entry; audit.ErrNotFound when
// there is no such agent; an agent revoked already stays as it was.
func (l *Log) RevokeAgent(ctx context.Context, name string, at time.Time) error {
	if l.ro {
		return l.errReadOnly()
	}
	if at.IsZero() {
		at = l.now()
	}
	err := l.wr.submit(ctx, &op{run: func(t *wtx) error {
		var known, revoked bool
		if err := t.tx.QueryRow(t.ctx, `SELECT EXISTS (SELECT 1 FROM ewp_audit.agents WHERE name = $1), EXISTS (SELECT 1 FROM ewp_audit.agent_revocations WHERE name = $1)`,
			name).Scan(&known, &revoked); err != nil {
			return auditchain.InDoubt(err)
		}
		switch {
		case !known:
			return fmt.Errorf("%w: no agent %q; list them with `ewp-audit agents list`", audit.ErrNotFound, name)
		case revoked:
			return nil
		}
		row := auditchain.RevocationRow{Name: name, RevokedNS: at.UnixNano()}
		return t.chainRow(auditchain.TableRevocations, &row, `INSERT INTO ewp_audit.agent_revocations (seq, name, revoked_ns)
			VALUES (`+nextSeq(auditchain.TableRevocations)+`, $1, $2) RETURNING seq`, row.Name, row.RevokedNS)
	}})
	return l.writeErr("revoke agent ", name, err)
}

// ListAgents lists every agent by name, revoked ones with their
// revocation time.
func (l *Log) ListAgents(ctx context.Context) ([]audit.AgentRecord, error) {
	rows, err := l.pool.Query(ctx, `SELECT a.body, r.revoked_ns FROM ewp_audit.agents a
		LEFT JOIN ewp_audit.agent_revocations r ON r.name = a.name ORDER BY a.name COLLATE "C"`)
	if err != nil {
		return nil, l.storeErr("list agents", err)
	}
	defer rows.Close()
	var out []audit.AgentRecord
	for rows.Next() {
		var body []byte
		var revoked *int64
		if err := rows.Scan(&body, &revoked); err != nil {
			return nil, l.storeErr("list agents", err)
		}
		r, err := auditchain.DecodeAgent(body)
		if err != nil {
			return nil, err
		}
		if revoked != nil {
			r.RevokedAt = time.Unix(0, *revoked).UTC()
		}
		out = append(out, *r)
	}
	return out, l.storeErr("list agents", rows.Err())
}

// AgentByCredential finds the live agent whose credential hashes to
// sha256hex, read as its chain event recorded it (auditchain.ChainedAgent)
// and refused (audit.ErrNotFound) when unknown or revoked — by its row or
// by a revocation event whose row is gone (its payload begins
// {"name":"NAME", as auditchain.RevocationPrefix spells it: names are
// ASCII that JSON writes as it is). One query; nothing caches it.
func (l *Log) AgentByCredential(ctx context.Context, sha256hex string) (*audit.AgentRecord, error) {
	var row auditchain.AgentRow
	var payload *string
	var prev, hash []byte
	var revoked bool
	err := l.pool.QueryRow(ctx, `SELECT a.seq, a.name, a.credential_sha256, a.created_ns, a.body, a.body_sha256, e.payload, e.prev_hash, e.hash,
		EXISTS (SELECT 1 FROM ewp_audit.agent_revocations r WHERE r.name = a.name)
		OR EXISTS (SELECT 1 FROM ewp_audit.events v WHERE v.tbl = 'agent_revocations' AND strpos(v.payload, '{"name":"' || a.name || '",') = 1)
		FROM ewp_audit.agents a LEFT JOIN ewp_audit.events e ON e.tbl = 'agents' AND e.row_seq = a.seq
		WHERE a.credential_sha256 = $1 ORDER BY e.seq LIMIT 1`, sha256hex).
		Scan(&row.Seq, &row.Name, &row.CredentialSHA256, &row.CreatedNS, &row.Body, &row.BodySum, &payload, &prev, &hash, &revoked)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: no agent has this credential", audit.ErrNotFound)
	}
	if err != nil {
		return nil, l.storeErr("read agent", err)
	}
	ev := auditchain.ChainEntry{Found: payload != nil, Prev: prev, Hash: hash}
	if payload != nil {
		ev.Payload = *payload
	}
	r, err := auditchain.ChainedAgent(&row, ev)
	if err != nil {
		return nil, err
	}
	if revoked {
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
	err = l.wr.submit(ctx, &op{run: func(t *wtx) error {
		var known bool
		if err := t.tx.QueryRow(t.ctx, `SELECT EXISTS (SELECT 1 FROM ewp_audit.decisions WHERE decision_id = $1)`, b(row.DecisionID)).Scan(&known); err != nil {
			return auditchain.InDoubt(err)
		}
		if !known {
			return fmt.Errorf("%w: no decision %s to record a result for", audit.ErrNotFound, r.DecisionID)
		}
		return t.chainRow(auditchain.TableResults, &row, `INSERT INTO ewp_audit.results (seq, decision_id, status, time_ns, body, body_sha256)
			VALUES (`+nextSeq(auditchain.TableResults)+`, $1, $2, $3, $4, $5) RETURNING seq`, b(row.DecisionID), row.Status, row.TimeNS, row.Body, row.BodySum)
	}})
	return l.writeErr("record result of ", r.DecisionID, err)
}

// ResultsFor lists the results of a decision, oldest first.
func (l *Log) ResultsFor(ctx context.Context, decisionID string) ([]audit.Result, error) {
	rows, err := l.pool.Query(ctx, `SELECT body FROM ewp_audit.results WHERE decision_id = $1 ORDER BY seq`, b(auditchain.AsJSON(decisionID)))
	if err != nil {
		return nil, l.storeErr("read results", err)
	}
	defer rows.Close()
	var out []audit.Result
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, l.storeErr("read results", err)
		}
		r, err := auditchain.DecodeResult(body)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, l.storeErr("read results", rows.Err())
}

// writeOnceKey indexes approval a, stored as row seq, in approval_keys
// when OnceApprovalFor can find it; inside Approve's transaction.
func (t *wtx) writeOnceKey(a *audit.Approval, seq int64) error {
	k, ok := auditchain.OnceKeyOf(a, seq)
	if !ok {
		return nil
	}
	_, err := t.tx.Exec(t.ctx, `INSERT INTO ewp_audit.approval_keys (approval_seq, approval_id, agent, any_agent, tool_name, arguments_hash, until_ns)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, k.ApprovalSeq, b(k.ApprovalID), b(k.Agent), k.AnyAgent, b(k.ToolName), b(k.ArgumentsHash), k.UntilNS)
	if err != nil {
		return auditchain.InDoubt(err)
	}
	return nil
}

// onceSQL finds the candidates of OnceApprovalFor through
// approval_keys_call (see the SQLite log's).
const onceSQL = `SELECT k.approval_id FROM ewp_audit.approval_keys k
	WHERE k.tool_name = $1 AND k.arguments_hash = $2 AND (k.any_agent OR k.agent = $3) AND (k.until_ns = 0 OR k.until_ns > $4)
	AND NOT EXISTS (SELECT 1 FROM ewp_audit.approval_uses u WHERE u.approval_id = k.approval_id)
	ORDER BY k.approval_seq DESC LIMIT $5`

// OnceApprovalFor finds the newest approved, unexpired, unused once
// approval for agent, toolName and argumentsHash (audit.OnceApprovals),
// read as its chain event recorded it and checked again
// (auditchain.OnceFits); audit.ErrNotFound when none.
func (l *Log) OnceApprovalFor(ctx context.Context, agent, toolName, argumentsHash string, now time.Time) (*audit.Approval, error) {
	rows, err := l.pool.Query(ctx, onceSQL, b(auditchain.AsJSON(toolName)), b(auditchain.AsJSON(argumentsHash)), b(auditchain.AsJSON(agent)),
		now.UnixNano(), auditchain.MaxOnceCandidates)
	if err != nil {
		return nil, l.storeErr("find a once approval", err)
	}
	var ids []string
	for rows.Next() {
		var id []byte
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, l.storeErr("find a once approval", err)
		}
		ids = append(ids, string(id))
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
// returns the new count (audit.Counters): one INSERT … ON CONFLICT DO
// UPDATE, which PostgreSQL makes atomic across every replica on the
// database, committed with synchronous_commit on before it returns. It
// takes no chain lock: counters are not chained.
func (l *Log) Add(ctx context.Context, key string, window time.Time, n int64) (int64, error) {
	if l.ro {
		return 0, l.errReadOnly()
	}
	if err := audit.CheckCounter(key, n); err != nil {
		return 0, err
	}
	pb := &pgx.Batch{}
	pb.Queue(`BEGIN`)
	pb.Queue(`SET LOCAL synchronous_commit = on`)
	pb.Queue(`INSERT INTO ewp_audit.counters (key, window_ns, n) VALUES ($1, $2, $3)
		ON CONFLICT (key, window_ns) DO UPDATE SET n = ewp_audit.counters.n + EXCLUDED.n RETURNING n`, []byte(key), window.UnixNano(), n)
	pb.Queue(`COMMIT`)
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return 0, l.storeErr("count "+key, err)
	}
	defer conn.Release()
	br := conn.SendBatch(ctx, pb)
	var count int64
	_, err = br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if err == nil {
		err = br.QueryRow().Scan(&count)
	}
	if err == nil {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		conn.Exec(ctx, `ROLLBACK`) //nolint:errcheck // the connection is dropped if this fails
		return 0, l.storeErr("count "+key, err)
	}
	return count, nil
}
