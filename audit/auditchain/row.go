package auditchain

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/ewp-go/ewp/audit"
)

// The chained tables, by the name an event's tbl gives them.
const (
	TableDecisions = "decisions"
	TableApprovals = "approvals"
	TableUses      = "approval_uses"
)

// Genesis is the prev_hash of the first event.
var Genesis = make([]byte, sha256.Size)

// Hash links an event to its predecessor: sha256(prev ‖ payload).
func Hash(prev, payload []byte) []byte {
	h := sha256.New()
	h.Write(prev)
	h.Write(payload)
	return h.Sum(nil)
}

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

type decisionPayload struct {
	ApprovalID    string  `json:"approval_id"`
	BodySHA256    string  `json:"body_sha256"`
	Credential    string  `json:"credential"`
	DecisionID    string  `json:"decision_id"`
	IdemKey       *string `json:"idempotency_key"`
	Outcome       string  `json:"outcome"`
	PropositionID string  `json:"proposition_id"`
	Seq           int64   `json:"seq"`
	Table         string  `json:"table"`
	TimeNS        int64   `json:"time_ns"`
	Tool          string  `json:"tool"`
}

// DecisionColumns derives a decision's row (all but seq) from it and its
// stored body.
func DecisionColumns(d *audit.Decision, body []byte) DecisionRow {
	sum := sha256.Sum256(body)
	r := DecisionRow{
		DecisionID: AsJSON(d.ID), TimeNS: d.Time.UnixNano(), Tool: AsJSON(d.Tool), Outcome: AsJSON(d.Outcome),
		PropositionID: AsJSON(d.PropositionID), Credential: AsJSON(d.Caller.Credential), ApprovalID: AsJSON(d.ApprovalID),
		Body: body, BodySum: sum[:],
	}
	if d.IdempotencyKey != "" {
		r.IdemKey = sql.NullString{String: AsJSON(d.IdempotencyKey), Valid: true}
	}
	return r
}

// Payload is the row's canonical JSON, as its event records it.
func (r *DecisionRow) Payload() []byte {
	p := decisionPayload{
		ApprovalID: r.ApprovalID, BodySHA256: hex.EncodeToString(r.BodySum), Credential: r.Credential,
		DecisionID: r.DecisionID, Outcome: r.Outcome, PropositionID: r.PropositionID,
		Seq: r.Seq, Table: TableDecisions, TimeNS: r.TimeNS, Tool: r.Tool,
	}
	if r.IdemKey.Valid {
		p.IdemKey = &r.IdemKey.String
	}
	return mustJSON(p)
}

// ApprovalRow is a row of approvals.
type ApprovalRow struct {
	Seq                    int64
	ApprovalID, DecisionID string
	Verdict                string
	CreatedNS              int64
	Body, BodySum          []byte
}

type approvalPayload struct {
	ApprovalID string `json:"approval_id"`
	BodySHA256 string `json:"body_sha256"`
	CreatedNS  int64  `json:"created_ns"`
	DecisionID string `json:"decision_id"`
	Seq        int64  `json:"seq"`
	Table      string `json:"table"`
	Verdict    string `json:"verdict"`
}

// ApprovalColumns derives an approval's row (all but seq) from it and its
// stored body.
func ApprovalColumns(a *audit.Approval, body []byte) ApprovalRow {
	sum := sha256.Sum256(body)
	return ApprovalRow{ApprovalID: AsJSON(a.ID), DecisionID: AsJSON(a.DecisionID), Verdict: AsJSON(a.Verdict),
		CreatedNS: a.CreatedAt.UnixNano(), Body: body, BodySum: sum[:]}
}

// Payload is the row's canonical JSON, as its event records it.
func (r *ApprovalRow) Payload() []byte {
	return mustJSON(approvalPayload{ApprovalID: r.ApprovalID, BodySHA256: hex.EncodeToString(r.BodySum),
		CreatedNS: r.CreatedNS, DecisionID: r.DecisionID, Seq: r.Seq, Table: TableApprovals, Verdict: r.Verdict})
}

// Use is the consumption of a single-use approval by a decision.
type Use struct {
	Seq        int64  `json:"seq"`
	ApprovalID string `json:"approval_id"`
	UsedBy     string `json:"used_by"` // the decision_id that used it
	UsedNS     int64  `json:"used_ns"`
}

type usePayload struct {
	ApprovalID string `json:"approval_id"`
	Seq        int64  `json:"seq"`
	Table      string `json:"table"`
	UsedBy     string `json:"used_by"`
	UsedNS     int64  `json:"used_ns"`
}

// Payload is the row's canonical JSON, as its event records it.
func (u *Use) Payload() []byte {
	return mustJSON(usePayload{ApprovalID: u.ApprovalID, Seq: u.Seq, Table: TableUses, UsedBy: u.UsedBy, UsedNS: u.UsedNS})
}

// AsJSON is s as it reads back from the JSON body: encoding/json replaces
// every byte of invalid UTF-8 with U+FFFD. Ids may carry such bytes (the
// kernel keeps lone surrogates as WTF-8), and a column must equal what
// Verify derives from the body, so columns and lookups use this form.
func AsJSON(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

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

// mustJSON marshals the payload structs (strings and ints), which cannot
// fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
