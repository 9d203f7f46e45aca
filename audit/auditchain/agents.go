package auditchain

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// The chained tables added with agent identities (the chain's format 1,
// extended: see audit/README.md). Their entries are numbered with the
// others'; a log that has none of them has the head it always had.
const (
	TableAgents      = "agents"
	TableRevocations = "agent_revocations"
	TableResults     = "results"
)

// AgentTables are the chained tables of agent identities and results, in
// the order Verify counts them.
var AgentTables = []string{TableAgents, TableRevocations, TableResults}

// ChainedRow is a row of one of AgentTables as the Walker checks it: the
// payload its event must have recorded, and "" when its columns agree
// with its body (else what disagrees).
type ChainedRow interface {
	Payload() []byte
	BodyCheck() string
}

// AgentRow is a row of agents: an agent as AddAgent stored it, never
// changed (a revocation is a row of agent_revocations).
type AgentRow struct {
	Seq              int64
	Name             string
	CredentialSHA256 string
	CreatedNS        int64
	Body, BodySum    []byte
}

// AgentBody is the stored JSON of an agent record: json.Marshal of it
// without its revocation, empty groups as none.
func AgentBody(r *audit.AgentRecord) ([]byte, error) {
	c := *r
	c.RevokedAt = time.Time{}
	if len(c.Groups) == 0 {
		c.Groups = nil
	}
	return json.Marshal(&c)
}

// AgentColumns derives an agent's row (all but seq) from its body.
func AgentColumns(r *audit.AgentRecord, body []byte) AgentRow {
	sum := sha256.Sum256(body)
	return AgentRow{Name: r.Name, CredentialSHA256: r.CredentialSHA256, CreatedNS: r.CreatedAt.UnixNano(), Body: body, BodySum: sum[:]}
}

// DecodeAgent reads a stored agent body.
func DecodeAgent(body []byte) (*audit.AgentRecord, error) {
	r := new(audit.AgentRecord)
	if err := json.Unmarshal(body, r); err != nil {
		return nil, fmt.Errorf("stored agent does not decode: %w", err)
	}
	return r, nil
}

// Payload is the row's canonical JSON, keys sorted.
func (r *AgentRow) Payload() []byte {
	return make(payload, 0, 256).hex("body_sha256", r.BodySum).int("created_ns", r.CreatedNS).
		str("credential_sha256", r.CredentialSHA256).str("name", r.Name).int("seq", r.Seq).str("table", TableAgents).end()
}

// BodyCheck compares the row with its body.
func (r *AgentRow) BodyCheck() string {
	if sum := sha256.Sum256(r.Body); !bytes.Equal(sum[:], r.BodySum) {
		return "body_sha256 column does not match the body: the agent's JSON was edited"
	}
	a, err := DecodeAgent(r.Body)
	if err != nil {
		return err.Error()
	}
	d := AgentColumns(a, r.Body)
	d.Seq = r.Seq
	return PayloadDiff(string(d.Payload()), r.Payload())
}

// RevocationRow is a row of agent_revocations: the agent Name revoked at
// RevokedNS. It has no body; its columns are all there is.
type RevocationRow struct {
	Seq       int64
	Name      string
	RevokedNS int64
}

// Payload is the row's canonical JSON, keys sorted.
func (r *RevocationRow) Payload() []byte {
	return make(payload, 0, 128).str("name", r.Name).int("revoked_ns", r.RevokedNS).int("seq", r.Seq).str("table", TableRevocations).end()
}

// BodyCheck: a revocation has no body.
func (r *RevocationRow) BodyCheck() string { return "" }

// RevocationPrefix is how the payload of every event recording a
// revocation of name begins, so a lookup can find a revocation the chain
// records even where its row was deleted behind the chain.
func RevocationPrefix(name string) string {
	return string(make(payload, 0, 96).str("name", name)) + ","
}

// ResultRow is a row of results: what a forwarded call did.
type ResultRow struct {
	Seq           int64
	DecisionID    string
	Status        string
	TimeNS        int64
	Body, BodySum []byte
}

// ResultColumns derives a result's row (all but seq) from its body.
func ResultColumns(r *audit.Result, body []byte) ResultRow {
	sum := sha256.Sum256(body)
	return ResultRow{DecisionID: AsJSON(r.DecisionID), Status: AsJSON(string(r.Status)), TimeNS: r.Time.UnixNano(), Body: body, BodySum: sum[:]}
}

// DecodeResult reads a stored result body.
func DecodeResult(body []byte) (*audit.Result, error) {
	r := new(audit.Result)
	if err := json.Unmarshal(body, r); err != nil {
		return nil, fmt.Errorf("stored result does not decode: %w", err)
	}
	return r, nil
}

// Payload is the row's canonical JSON, keys sorted.
func (r *ResultRow) Payload() []byte {
	return make(payload, 0, 256).hex("body_sha256", r.BodySum).str("decision_id", r.DecisionID).int("seq", r.Seq).
		str("status", r.Status).str("table", TableResults).int("time_ns", r.TimeNS).end()
}

// BodyCheck compares the row with its body.
func (r *ResultRow) BodyCheck() string {
	if sum := sha256.Sum256(r.Body); !bytes.Equal(sum[:], r.BodySum) {
		return "body_sha256 column does not match the body: the result's JSON was edited"
	}
	res, err := DecodeResult(r.Body)
	if err != nil {
		return err.Error()
	}
	d := ResultColumns(res, r.Body)
	d.Seq = r.Seq
	return PayloadDiff(string(d.Payload()), r.Payload())
}

// OnceKey is a row of approval_keys, the index OnceApprovalFor reads:
// derived from an approved once approval whose action names a tool,
// written with it, append-only. It is not chained itself (the approval
// is); Verify checks that the table holds exactly the keys the chained
// approvals derive, and a lookup honours only what the approval itself,
// read as its chain event recorded it, says (OnceFits).
type OnceKey struct {
	ApprovalSeq   int64 // the approval's row: newest is greatest
	ApprovalID    string
	Agent         string // "" when AnyAgent
	AnyAgent      bool
	ToolName      string
	ArgumentsHash string
	UntilNS       int64 // 0: no expiry
}

// OnceKeyOf is the key of an approval stored as row seq; false when the
// approval is not one OnceApprovalFor can find (a rejection, a scope, no
// tool name or arguments hash).
func OnceKeyOf(a *audit.Approval, seq int64) (OnceKey, bool) {
	if a.Verdict != audit.Approved || !a.Once || a.Action == nil || a.Action.ToolName == "" || a.Action.ArgumentsHash == "" {
		return OnceKey{}, false
	}
	k := OnceKey{ApprovalSeq: seq, ApprovalID: AsJSON(a.ID), AnyAgent: a.AnyAgent, ToolName: AsJSON(a.Action.ToolName),
		ArgumentsHash: AsJSON(a.Action.ArgumentsHash)}
	if !a.AnyAgent {
		k.Agent = AsJSON(a.Agent)
	}
	if !a.Until.IsZero() {
		k.UntilNS = a.Until.UnixNano()
	}
	return k, true
}

// OnceFits is the rule every store applies to a candidate of
// OnceApprovalFor, on the approval as its chain event recorded it: an
// approved once approval, unexpired at now, of agent (or AnyAgent), for
// toolName and argumentsHash. Whether it is unused is the store's part.
func OnceFits(a *audit.Approval, agent, toolName, argumentsHash string, now time.Time) bool {
	k, ok := OnceKeyOf(a, 0)
	return ok && (k.AnyAgent || k.Agent == AsJSON(agent)) && k.ToolName == AsJSON(toolName) &&
		k.ArgumentsHash == AsJSON(argumentsHash) && (k.UntilNS == 0 || now.UnixNano() < k.UntilNS)
}

// NoOnceApproval is OnceApprovalFor's ErrNotFound.
func NoOnceApproval(agent, toolName string) error {
	return fmt.Errorf("%w: no unused once approval for agent %q and tool %q with these arguments", audit.ErrNotFound, agent, toolName)
}

// MaxOnceCandidates is how many keys OnceApprovalFor reads, newest first,
// before it answers ErrNotFound: the index finds them by tool and
// arguments hash, so only keys whose approvals were read back as not
// fitting (edited behind the chain) can fill it.
const MaxOnceCandidates = 16

// ChainedAgent is the agent a stored row holds, provided the chain
// vouches for it as ChainedApproval does for an approval: an event
// records exactly this row, its hash links, and the columns agree with
// the body. Else the error wraps ErrBrokenLog: a credential inserted or
// edited behind the chain names nobody.
func ChainedAgent(row *AgentRow, ev ChainEntry) (*audit.AgentRecord, error) {
	fail := func(format string, args ...any) error {
		return BrokenLog(fmt.Sprintf("agents row %d: ", row.Seq) + fmt.Sprintf(format, args...))
	}
	switch {
	case !ev.Found:
		return nil, fail("no chain event records it (inserted behind the chain)")
	case PayloadDiff(ev.Payload, row.Payload()) != "":
		return nil, fail("it differs from what its chain event recorded: %s", PayloadDiff(ev.Payload, row.Payload()))
	case !bytes.Equal(ev.Hash, Hash(ev.Prev, []byte(ev.Payload))):
		return nil, fail("its chain event does not hash to its own hash")
	}
	if d := row.BodyCheck(); d != "" {
		return nil, fail("%s", d)
	}
	return DecodeAgent(row.Body)
}
