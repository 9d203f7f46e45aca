package auditchain

import (
	"bytes"
	"crypto/sha256"
	"database/sql"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/chain"
)

// The chained tables, by the name an event's tbl gives them.
const (
	TableDecisions = "decisions"
	TableApprovals = "approvals"
	TableUses      = "approval_uses"
)

// Genesis returns the prev_hash of the first event (32 zero bytes), a
// new slice each time: a shared one could be written through by any
// caller, and every chain would then start elsewhere.
func Genesis() []byte { return make([]byte, sha256.Size) }

// Hash links an event to its predecessor: sha256(prev ‖ payload), the
// link of the ledger's chain.
func Hash(prev, payload []byte) []byte { return chain.Hash(prev, payload) }

// The payloads are what the chain commits to for a row: every column, the
// body through its sha256. Keys are declared in sorted order so the JSON
// is canonical, and Verify rebuilds them from the row as it is now.

// DecisionRow is a row of decisions.
type DecisionRow struct {
	Seq           int64
	DecisionID    string
	TimeNS        int64
	Tool, Outcome string
	PropositionID string
	Credential    string
	IdemKey       sql.NullString
	ApprovalID    string
	Body, BodySum []byte
}

// DecisionColumns derives a decision's row (all but seq) from it and its
// stored body.
func DecisionColumns(d *audit.Decision, body []byte) DecisionRow {
	sum := sha256.Sum256(body)
	r := DecisionRow{
		DecisionID: AsJSON(d.ID), TimeNS: d.Time.UnixNano(), Tool: AsJSON(d.Tool), Outcome: AsJSON(string(d.Outcome)),
		PropositionID: AsJSON(d.PropositionID), Credential: AsJSON(d.Caller.Credential), ApprovalID: AsJSON(d.ApprovalID),
		Body: body, BodySum: sum[:],
	}
	if d.IdempotencyKey != "" {
		r.IdemKey = sql.NullString{String: AsJSON(d.IdempotencyKey), Valid: true}
	}
	return r
}

// Payload is the row's canonical JSON, as its event records it: its keys
// sorted (TestPayloadsMatchMarshal).
func (r *DecisionRow) Payload() []byte { return r.AppendPayload(make([]byte, 0, 512)) }

// AppendPayload appends the row's payload to dst.
func (r *DecisionRow) AppendPayload(dst []byte) []byte {
	p := payload(dst).str("approval_id", r.ApprovalID).hex("body_sha256", r.BodySum).
		str("credential", r.Credential).str("decision_id", r.DecisionID)
	if r.IdemKey.Valid {
		p = p.str("idempotency_key", r.IdemKey.String)
	} else {
		p = p.null("idempotency_key")
	}
	return p.str("outcome", r.Outcome).str("proposition_id", r.PropositionID).int("seq", r.Seq).
		str("table", TableDecisions).int("time_ns", r.TimeNS).str("tool", r.Tool).end()
}

// ApprovalRow is a row of approvals.
type ApprovalRow struct {
	Seq                    int64
	ApprovalID, DecisionID string
	Verdict                string
	CreatedNS              int64
	Body, BodySum          []byte
}

// ApprovalColumns derives an approval's row (all but seq) from it and its
// stored body.
func ApprovalColumns(a *audit.Approval, body []byte) ApprovalRow {
	sum := sha256.Sum256(body)
	return ApprovalRow{ApprovalID: AsJSON(a.ID), DecisionID: AsJSON(a.DecisionID), Verdict: AsJSON(a.Verdict),
		CreatedNS: a.CreatedAt.UnixNano(), Body: body, BodySum: sum[:]}
}

// Payload is the row's canonical JSON, as its event records it: its keys
// sorted.
func (r *ApprovalRow) Payload() []byte {
	return make(payload, 0, 192).str("approval_id", r.ApprovalID).hex("body_sha256", r.BodySum).
		int("created_ns", r.CreatedNS).str("decision_id", r.DecisionID).int("seq", r.Seq).
		str("table", TableApprovals).str("verdict", r.Verdict).end()
}

// Use is the consumption of a single-use approval by a decision.
type Use struct {
	Seq        int64  `json:"seq"`
	ApprovalID string `json:"approval_id"`
	UsedBy     string `json:"used_by"` // the decision_id that used it
	UsedNS     int64  `json:"used_ns"`
}

// Payload is the row's canonical JSON, as its event records it: its keys
// sorted.
func (u *Use) Payload() []byte {
	return make(payload, 0, 160).str("approval_id", u.ApprovalID).int("seq", u.Seq).
		str("table", TableUses).str("used_by", u.UsedBy).int("used_ns", u.UsedNS).end()
}

// AsJSON is s as it reads back from the JSON body: encoding/json replaces
// every byte of invalid UTF-8 with U+FFFD. Ids may carry such bytes (the
// kernel keeps lone surrogates as WTF-8), and a column must equal what
// Verify derives from the body, so columns and lookups use this form.
func AsJSON(s string) string { return audit.AsJSON(s) }

// SplitPayload cuts a payload marshalled with seq 0 around that number,
// so the caller can build it ahead of the writer, which alone knows the
// row's seq. The key "seq" is found by its quoted form followed by the
// zero: inside a JSON string every quote is escaped, so that text occurs
// only as the key.
func SplitPayload(p []byte) (pre, post []byte) {
	const key = `"seq":0`
	i := bytes.Index(p, []byte(key))
	if i < 0 {
		panic("payload without seq: " + string(p))
	}
	return p[:i+len(key)-1], p[i+len(key):]
}
