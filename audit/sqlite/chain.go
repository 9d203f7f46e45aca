package sqlite

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

// genesis is the prev_hash of the first event.
var genesis = make([]byte, sha256.Size)

// chainHash links an event to its predecessor.
func chainHash(prev, payload []byte) []byte {
	h := sha256.New()
	h.Write(prev)
	h.Write(payload)
	return h.Sum(nil)
}

// The payloads are what the chain commits to for a row: every column, the
// body through its sha256. Keys are declared in sorted order so the JSON
// is canonical, and Verify rebuilds them from the row as it is now.

type decisionRow struct {
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

// decisionColumns derives a decision's row (all but seq) from it and its
// stored body.
func decisionColumns(d *audit.Decision, body []byte) decisionRow {
	sum := sha256.Sum256(body)
	r := decisionRow{
		DecisionID: asJSON(d.ID), TimeNS: d.Time.UnixNano(), Tool: asJSON(d.Tool), Outcome: asJSON(d.Outcome),
		PropositionID: asJSON(d.PropositionID), Credential: asJSON(d.Caller.Credential), ApprovalID: asJSON(d.ApprovalID),
		Body: body, BodySum: sum[:],
	}
	if d.IdempotencyKey != "" {
		r.IdemKey = sql.NullString{String: asJSON(d.IdempotencyKey), Valid: true}
	}
	return r
}

func (r *decisionRow) payload() []byte {
	p := decisionPayload{
		ApprovalID: r.ApprovalID, BodySHA256: hex.EncodeToString(r.BodySum), Credential: r.Credential,
		DecisionID: r.DecisionID, Outcome: r.Outcome, PropositionID: r.PropositionID,
		Seq: r.Seq, Table: tableDecisions, TimeNS: r.TimeNS, Tool: r.Tool,
	}
	if r.IdemKey.Valid {
		p.IdemKey = &r.IdemKey.String
	}
	return mustJSON(p)
}

type approvalRow struct {
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

func approvalColumns(a *audit.Approval, body []byte) approvalRow {
	sum := sha256.Sum256(body)
	return approvalRow{ApprovalID: asJSON(a.ID), DecisionID: asJSON(a.DecisionID), Verdict: asJSON(a.Verdict),
		CreatedNS: a.CreatedAt.UnixNano(), Body: body, BodySum: sum[:]}
}

func (r *approvalRow) payload() []byte {
	return mustJSON(approvalPayload{ApprovalID: r.ApprovalID, BodySHA256: hex.EncodeToString(r.BodySum),
		CreatedNS: r.CreatedNS, DecisionID: r.DecisionID, Seq: r.Seq, Table: tableApprovals, Verdict: r.Verdict})
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

func (u *Use) payload() []byte {
	return mustJSON(usePayload{ApprovalID: u.ApprovalID, Seq: u.Seq, Table: tableUses, UsedBy: u.UsedBy, UsedNS: u.UsedNS})
}

// asJSON is s as it reads back from the JSON body: encoding/json replaces
// every byte of invalid UTF-8 with U+FFFD. Ids may carry such bytes (the
// kernel keeps lone surrogates as WTF-8), and a column must equal what
// Verify derives from the body, so columns and lookups use this form.
func asJSON(s string) string {
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

// splitPayload cuts a payload marshalled with seq 0 around that number,
// so the caller can build it ahead of the writer, which alone knows the
// row's seq. The key "seq" is found by its quoted form followed by the
// zero: inside a JSON string every quote is escaped, so that text occurs
// only as the key.
func splitPayload(p []byte) (pre, post []byte) {
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

// isUnique reports a UNIQUE constraint failure naming column (e.g.
// "approval_uses.approval_id"). The driver's message lists the columns.
func isUnique(err error, column string) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") && strings.Contains(err.Error(), column)
}
