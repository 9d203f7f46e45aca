package auditchain

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// tricky are strings encoding/json escapes in every way it does: quotes,
// controls, HTML-sensitive characters, invalid UTF-8, lone surrogates
// (WTF-8), U+2028 and U+2029.
var tricky = []string{"", "plain", `q"uote`, `back\slash`, "tab\tnl\n", "<b>&amp;</b>", "\xff\xfe", "\xed\xa0\x80",
	"line\u2028sep\u2029", "日本語", "\x00nul", "é"}

func randomDecision(r *rand.Rand) *audit.Decision {
	s := func() string { return tricky[r.IntN(len(tricky))] }
	strs := func() []string {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		out := make([]string, 1+r.IntN(3))
		for i := range out {
			out[i] = s()
		}
		return out
	}
	d := &audit.Decision{ID: s(), Time: time.Unix(r.Int64N(4e9), r.Int64N(1e9)).In(time.FixedZone("x", r.IntN(7)*3600)), Tool: s(),
		Caller: audit.Caller{ClientName: s(), ClientVersion: s(), Transport: s(), RemoteAddr: s(), Role: s(), Credential: s()},
		Agent:  s(), AgentGroups: strs(),
		PropositionID: s(), ViewID: s(), ViewHash: s(), ActionID: s(), ActionKind: s(), Risk: s(),
		Concepts: strs(), Cardinality: s(), ToolName: s(), ArgumentsHash: s(), GraphVersion: r.Int64N(3) - 1, PolicyIDs: strs(), PolicySetHash: s(),
		Outcome: audit.Outcome(s()), Code: s(), Message: s(), ApprovalID: s(), IdempotencyKey: s()}
	if r.IntN(2) == 0 {
		d.Reversible = new(r.IntN(2) == 0)
	}
	switch r.IntN(4) {
	case 0:
		d.Arguments = json.RawMessage(`{"path":"` + "x" + `","n":[1,2.50]}`)
	case 1:
		d.Arguments, d.ArgumentsTruncated = json.RawMessage(`"{\"path\":\"<a&b>"`), true
	case 2:
		d.Arguments = json.RawMessage(` { "spaced" : true } `) // not compact: encoding/json compacts it
	}
	if r.IntN(2) == 0 {
		d.MinDepth = new(r.IntN(9) - 4)
	}
	details := []any{nil, map[string]any{"b": 1, "a": []string{s()}}, struct {
		X string `json:"x"`
		Y *int   `json:"y,omitempty"`
	}{X: s()}, json.RawMessage(` { "raw" : [1, 2] } `), json.RawMessage(nil), (*int)(nil), 0.1,
		compact(map[string]any{"c": s(), "d": []int{1}}), audit.CompactJSON(nil)}
	if r.IntN(2) == 0 {
		d.RiskPolicy = details[r.IntN(len(details))]
	}
	if r.IntN(4) > 0 {
		d.Layers = make([]audit.Layer, r.IntN(3))
		for i := range d.Layers {
			d.Layers[i] = audit.Layer{Layer: s(), Decision: audit.Verdict(s()), Reasons: strs(), Detail: details[r.IntN(len(details))]}
		}
	}
	return d
}

// compact is v as json.Marshal writes it, carried as audit.CompactJSON.
func compact(v any) audit.CompactJSON {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestMarshalDecisionMatchesJSON holds MarshalDecision byte-equal to
// json.Marshal over random decisions with every kind of string, empty and
// nil lists, and details of several types.
func TestMarshalDecisionMatchesJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		d := randomDecision(r)
		want, werr := json.Marshal(d)
		got, gerr := MarshalDecision(d)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("decision %d:\njson: %s (%v)\nours: %s (%v)", i, want, werr, got, gerr)
		}
	}
}

func TestMarshalDecisionRefusesWhatJSONRefuses(t *testing.T) {
	for _, d := range []*audit.Decision{
		{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{RiskPolicy: func() {}},
		{Layers: []audit.Layer{{Detail: make(chan int)}}},
		{RiskPolicy: json.RawMessage(`{"a":`)},
	} {
		if _, err := json.Marshal(d); err == nil {
			t.Fatalf("json.Marshal accepted %+v", d)
		}
		if _, err := MarshalDecision(d); err == nil {
			t.Fatalf("MarshalDecision accepted %+v", d)
		}
	}
}

func FuzzMarshalDecision(f *testing.F) {
	for _, s := range tricky {
		f.Add(s, s, int64(0))
	}
	f.Fuzz(func(t *testing.T, a, b string, n int64) {
		d := &audit.Decision{ID: a, Tool: b, Time: time.Unix(n%(1<<40), 0).UTC(), Caller: audit.Caller{Credential: a + b},
			Agent: b, AgentGroups: []string{a}, Concepts: []string{a, b}, GraphVersion: n, Layers: []audit.Layer{{Layer: a, Reasons: []string{b}, Detail: map[string]string{a: b}}}}
		want, werr := json.Marshal(d)
		got, gerr := MarshalDecision(d)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("json: %s (%v)\nours: %s (%v)", want, werr, got, gerr)
		}
	})
}

// BenchmarkMarshalDecision encodes a decision as the server records a
// warrant-only may_act: plain ASCII, a typed warrant detail and risk
// policy.
func BenchmarkMarshalDecision(b *testing.B) {
	type warrantDetail struct {
		Acceptance     string   `json:"acceptance"`
		Conflict       string   `json:"conflict"`
		Currency       string   `json:"currency"`
		RationaleCodes []string `json:"rationale_codes"`
		Strength       float64  `json:"strength"`
		Sufficiency    string   `json:"sufficiency"`
		Verification   string   `json:"verification"`
	}
	type riskPolicy struct {
		HighRequiresAccepted bool   `json:"high_requires_accepted"`
		HighRequiresNoOpen   bool   `json:"high_requires_no_open_conflict"`
		PolicyID             string `json:"policy_id"`
		Version              string `json:"version"`
	}
	d := &audit.Decision{ID: "01a23293-6338-79f7-a176-2997b583265f", Time: time.Now().UTC(), Tool: "may_act",
		Caller:        audit.Caller{ClientName: "claude-code", ClientVersion: "1.0", Transport: "http", RemoteAddr: "127.0.0.1:40312", Role: "evaluate", Credential: "agent"},
		PropositionID: "P-api-cert-valid", ViewID: "example-cert-1", ViewHash: "194a66d1e345224c3780a016d464c44e57161faf07c68a817f84c6a4a36f8306",
		ActionID: "a", ActionKind: "deploy", Risk: "high", Reversible: new(false),
		PolicyIDs: []string{"protected_file", "no_delete_under_etc", "bulk_delete"}, PolicySetHash: "2dac6aa26929b10d1b4c3bb65ccb8df5a7820ddeda9818a4efeda204952dadf3",
		RiskPolicy: riskPolicy{true, true, "action-v0.1", "0.1.0"},
		Layers: []audit.Layer{{Layer: "warrant", Decision: "MAY_ACT", Reasons: []string{"warrant suffices for risk high"},
			Detail: warrantDetail{"ACCEPTED", "NONE", "CURRENT", []string{"acceptance.accepted", "verification.external"}, 0.9, "SUFFICIENT", "EXTERNAL"}}},
		Outcome: "MAY_ACT"}
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(d)
		}
	})
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			_, _ = MarshalDecision(d)
		}
	})
}
