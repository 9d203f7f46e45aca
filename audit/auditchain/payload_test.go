package auditchain

import (
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// The payloads as they were first defined: structs marshalled by
// encoding/json. The appenders must write exactly these bytes, or every
// chain written before would stop verifying and the two stores could
// disagree.
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

type approvalPayload struct {
	ApprovalID string `json:"approval_id"`
	BodySHA256 string `json:"body_sha256"`
	CreatedNS  int64  `json:"created_ns"`
	DecisionID string `json:"decision_id"`
	Seq        int64  `json:"seq"`
	Table      string `json:"table"`
	Verdict    string `json:"verdict"`
}

type usePayload struct {
	ApprovalID string `json:"approval_id"`
	Seq        int64  `json:"seq"`
	Table      string `json:"table"`
	UsedBy     string `json:"used_by"`
	UsedNS     int64  `json:"used_ns"`
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPayloadsMatchMarshal fails if an appender's output differs from
// json.Marshal of the struct by a byte, for strings that need escaping
// (quotes, HTML characters, control characters, U+2028, non-ASCII,
// invalid UTF-8) and plain ones.
func TestPayloadsMatchMarshal(t *testing.T) {
	strs := []string{"", "P-db", "may_act", `a"b\c`, "<script>&amp;", "a<b", "a>b", "tab\there\n", "\x00\x1f", "line\u2028sep\u2029",
		"caf\u00e9 \u65e5\u672c", "bad\xff\xfeutf8", "\ud7ff\U0001F600", strings.Repeat("x", 300), "\x7f del"}
	for i, s := range strs {
		for _, key := range []sql.NullString{{}, {String: s, Valid: true}} {
			d := DecisionRow{Seq: int64(i) * 1e9, DecisionID: s, TimeNS: -int64(i), Tool: s, Outcome: s, PropositionID: s,
				Credential: s, IdemKey: key, ApprovalID: s, BodySum: []byte{0, 1, 0xab, byte(i)}}
			p := decisionPayload{ApprovalID: s, BodySHA256: hex.EncodeToString(d.BodySum), Credential: s, DecisionID: s,
				Outcome: s, PropositionID: s, Seq: d.Seq, Table: TableDecisions, TimeNS: d.TimeNS, Tool: s}
			if key.Valid {
				p.IdemKey = &key.String
			}
			if got, want := string(d.Payload()), marshal(t, p); got != want {
				t.Errorf("decision payload for %q:\n got %s\nwant %s", s, got, want)
			}
		}
		a := ApprovalRow{Seq: int64(i), ApprovalID: s, DecisionID: s, Verdict: s, CreatedNS: 1 << 62, BodySum: []byte{byte(i)}}
		if got, want := string(a.Payload()), marshal(t, approvalPayload{ApprovalID: s, BodySHA256: hex.EncodeToString(a.BodySum),
			CreatedNS: a.CreatedNS, DecisionID: s, Seq: a.Seq, Table: TableApprovals, Verdict: s}); got != want {
			t.Errorf("approval payload for %q:\n got %s\nwant %s", s, got, want)
		}
		u := Use{Seq: int64(i), ApprovalID: s, UsedBy: s, UsedNS: 42}
		if got, want := string(u.Payload()), marshal(t, usePayload{ApprovalID: s, Seq: u.Seq, Table: TableUses, UsedBy: s, UsedNS: 42}); got != want {
			t.Errorf("use payload for %q:\n got %s\nwant %s", s, got, want)
		}
	}
}
