package audit_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

var t0 = time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC)

// answered is a REQUIRE_CONFIRMATION decision an operator answers.
func answered() *audit.Decision {
	return &audit.Decision{
		ID: "0190-d1", Time: t0, Tool: audit.ToolMayAct, Outcome: audit.OutcomeRequireConfirmation,
		PropositionID: "P-db", ViewID: "v1", ActionID: "act-1", ActionKind: "migrate",
		Risk: "high", Reversible: new(false), Concepts: []string{"database", "schema"},
		ToolName: "psql", ArgumentsHash: "ab12",
	}
}

// Risk policies as a call encodes them (the default) and as an ingest
// caller may relax them.
var (
	strict  = audit.CompactJSON(`{"policy_id":"action-v0.1","version":"0.1.0","high_requires_accepted":true,"high_requires_no_open_conflict":true}`)
	relaxed = audit.CompactJSON(`{"policy_id":"ingest-relaxed","version":"1","high_requires_accepted":false,"high_requires_no_open_conflict":true}`)
)

func onceApproval() *audit.Approval {
	d := answered()
	return &audit.Approval{ID: "0190-a1", DecisionID: d.ID, Verdict: audit.Approved, Approver: "ops",
		CreatedAt: t0, Once: true, Action: new(d.Action())}
}

func scopeApproval() *audit.Approval {
	a := onceApproval()
	a.Once = false
	a.Scope = &audit.Scope{PropositionID: "P-db", ActionKind: "migrate", Concepts: []string{"database", "schema", "index"}, ToolName: "psql"}
	a.Until = t0.Add(2 * time.Hour)
	return a
}

func TestCovers(t *testing.T) {
	cases := []struct {
		name     string
		approval func() *audit.Approval
		call     func(d *audit.Decision)
		now      time.Time
		want     error
		code     string
		mention  string
	}{
		{"once, the same action", onceApproval, func(*audit.Decision) {}, t0, nil, "", ""},
		{"once, concepts in another order", onceApproval, func(d *audit.Decision) { d.Concepts = []string{"schema", "database"} }, t0, nil, "", ""},
		{"rejected", func() *audit.Approval {
			a := onceApproval()
			a.Verdict, a.Note = audit.Rejected, "use a replica first"
			return a
		}, func(*audit.Decision) {}, t0, audit.ErrApprovalRejected, audit.CodeApprovalRejected, "use a replica first"},
		{"expired at the instant", func() *audit.Approval {
			a := onceApproval()
			a.Until = t0
			return a
		}, func(*audit.Decision) {}, t0, audit.ErrApprovalExpired, audit.CodeApprovalExpired, "expired at 2026-09-21T12:00:00Z"},
		{"once, not yet expired", func() *audit.Approval {
			a := onceApproval()
			a.Until = t0.Add(time.Second)
			return a
		}, func(*audit.Decision) {}, t0, nil, "", ""},
		{"once, other proposition", onceApproval, func(d *audit.Decision) { d.PropositionID = "P-other" }, t0, audit.ErrApprovalWrongProposition, audit.CodeApprovalWrongProposition, `"P-other"`},
		{"once, other action id", onceApproval, func(d *audit.Decision) { d.ActionID = "act-2" }, t0, audit.ErrApprovalWrongAction, audit.CodeApprovalWrongAction, "action_id"},
		{"once, other kind", onceApproval, func(d *audit.Decision) { d.ActionKind = "drop" }, t0, audit.ErrApprovalWrongAction, audit.CodeApprovalWrongAction, "action_kind"},
		{"once, other risk", onceApproval, func(d *audit.Decision) { d.Risk = "low" }, t0, audit.ErrApprovalWrongAction, audit.CodeApprovalWrongAction, "risk"},
		{"once, reversible unset", onceApproval, func(d *audit.Decision) { d.Reversible = nil }, t0, audit.ErrApprovalWrongAction, audit.CodeApprovalWrongAction, "reversible"},
		{"once, one more concept", onceApproval, func(d *audit.Decision) { d.Concepts = append(d.Concepts, "index") }, t0, audit.ErrApprovalWrongAction, audit.CodeApprovalWrongAction, "concepts"},
		{"once, other tool", onceApproval, func(d *audit.Decision) { d.ToolName = "mysql" }, t0, audit.ErrApprovalWrongAction, audit.CodeApprovalWrongAction, "tool_name"},
		{"once, other arguments", onceApproval, func(d *audit.Decision) { d.ArgumentsHash = "cd34" }, t0, audit.ErrApprovalWrongAction, audit.CodeApprovalWrongAction, "arguments_hash"},
		{"scope, another action inside it", scopeApproval, func(d *audit.Decision) {
			d.ActionID, d.ArgumentsHash, d.Concepts, d.Risk = "act-9", "ffff", []string{"index"}, "low"
		}, t0.Add(time.Hour), nil, "", ""},
		{"scope, expired", scopeApproval, func(*audit.Decision) {}, t0.Add(3 * time.Hour), audit.ErrApprovalExpired, audit.CodeApprovalExpired, "server time"},
		{"scope, other proposition", scopeApproval, func(d *audit.Decision) { d.PropositionID = "P-x" }, t0, audit.ErrApprovalWrongProposition, audit.CodeApprovalWrongProposition, "scope"},
		{"scope, other kind", scopeApproval, func(d *audit.Decision) { d.ActionKind = "drop" }, t0, audit.ErrApprovalOutOfScope, audit.CodeApprovalOutOfScope, "action_kind"},
		{"scope, other tool", scopeApproval, func(d *audit.Decision) { d.ToolName = "sh" }, t0, audit.ErrApprovalOutOfScope, audit.CodeApprovalOutOfScope, "tool_name"},
		{"scope, concept outside", scopeApproval, func(d *audit.Decision) { d.Concepts = []string{"database", "users"} }, t0, audit.ErrApprovalOutOfScope, audit.CodeApprovalOutOfScope, `"users"`},
		{"scope, no concepts", scopeApproval, func(d *audit.Decision) { d.Concepts = nil }, t0, audit.ErrApprovalOutOfScope, audit.CodeApprovalOutOfScope, "names no concepts"},
		{"once, concepts folded as grounding folds them", onceApproval, func(d *audit.Decision) { d.Concepts = []string{"SCHEMA", "Database"} }, t0, nil, "", ""},
		{"scope, concept in another case", scopeApproval, func(d *audit.Decision) { d.Concepts = []string{"Index"} }, t0, nil, "", ""},
		{"scope, concept in another Unicode form", func() *audit.Approval {
			a := scopeApproval()
			a.Scope.Concepts = []string{"caf\u00e9"} // é precomposed
			return a
		}, func(d *audit.Decision) { d.Concepts = []string{"CAFE\u0301"} }, t0, nil, "", ""},
		{"once, other cardinality", onceApproval, func(d *audit.Decision) { d.Cardinality = "multiple" }, t0, audit.ErrApprovalWrongAction, audit.CodeApprovalWrongAction, "cardinality"},
		{"once, other min_depth", onceApproval, func(d *audit.Decision) { d.MinDepth = new(2) }, t0, audit.ErrApprovalWrongAction, audit.CodeApprovalWrongAction, "min_depth"},
		{"once, under a risk policy the approval did not see", onceApproval, func(d *audit.Decision) { d.RiskPolicy = relaxed }, t0, audit.ErrApprovalWrongAction, audit.CodeApprovalWrongAction, "risk_policy"},
		{"once, the same risk policy read back from the log", func() *audit.Approval {
			a := onceApproval()
			a.Action.RiskPolicy = map[string]any{"version": "0.1.0", "policy_id": "action-v0.1", "high_requires_no_open_conflict": true, "high_requires_accepted": true}
			return a
		}, func(d *audit.Decision) { d.RiskPolicy = strict }, t0, nil, "", ""},
		{"once, a laxer risk policy", func() *audit.Approval {
			a := onceApproval()
			a.Action.RiskPolicy = strict
			return a
		}, func(d *audit.Decision) { d.RiskPolicy = relaxed }, t0, audit.ErrApprovalWrongAction, audit.CodeApprovalWrongAction, "risk_policy"},
		{"scope, more risk than answered", func() *audit.Approval {
			a := scopeApproval()
			a.Action.Risk = "low"
			return a
		}, func(d *audit.Decision) { d.Risk = "high" }, t0, audit.ErrApprovalOutOfScope, audit.CodeApprovalOutOfScope, `risk "high" is above the risk "low"`},
		{"scope, irreversible where the answered was reversible", func() *audit.Approval {
			a := scopeApproval()
			a.Action.Reversible = new(true)
			return a
		}, func(d *audit.Decision) { d.Reversible = new(false) }, t0, audit.ErrApprovalOutOfScope, audit.CodeApprovalOutOfScope, "reversible is false"},
		{"scope, a laxer risk policy", func() *audit.Approval {
			a := scopeApproval()
			a.Action.RiskPolicy = strict
			return a
		}, func(d *audit.Decision) { d.RiskPolicy = relaxed }, t0, audit.ErrApprovalOutOfScope, audit.CodeApprovalOutOfScope, "high_requires_accepted is false"},
		{"scope, a stricter risk policy", func() *audit.Approval {
			a := scopeApproval()
			a.Action.RiskPolicy = relaxed
			return a
		}, func(d *audit.Decision) { d.RiskPolicy = strict }, t0, nil, "", ""},
		{"scope, a risk policy the approval does not record", scopeApproval, func(d *audit.Decision) { d.RiskPolicy = strict }, t0, audit.ErrApprovalOutOfScope, audit.CodeApprovalOutOfScope, "records no risk policy"},
		{"scope without a proposition, for a guard-only call", func() *audit.Approval {
			a := scopeApproval()
			a.Action.PropositionID, a.Scope.PropositionID = "", ""
			return a
		}, func(d *audit.Decision) { d.PropositionID, d.ActionID = "", "act-7" }, t0, nil, "", ""},
		{"scope without a proposition, for a call with one", func() *audit.Approval {
			a := scopeApproval()
			a.Action.PropositionID, a.Scope.PropositionID = "", ""
			return a
		}, func(*audit.Decision) {}, t0, audit.ErrApprovalWrongProposition, audit.CodeApprovalWrongProposition, `presented for "P-db"`},
		{"scope without kind covers any kind", func() *audit.Approval {
			a := scopeApproval()
			a.Scope.ActionKind = ""
			return a
		}, func(d *audit.Decision) { d.ActionKind = "drop" }, t0, nil, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := answered()
			d.ID = "0190-d2"
			c.call(d)
			err := c.approval().Covers(d, c.now)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("Covers = %v, want %v", err, c.want)
			}
			if err == nil {
				return
			}
			var ce *audit.CoverageError
			if !errors.As(err, &ce) || ce.Code() != c.code || audit.CodeOf(err) != c.code {
				t.Fatalf("code of %v: want %s", err, c.code)
			}
			if !strings.Contains(err.Error(), c.mention) || !strings.HasPrefix(err.Error(), c.code) {
				t.Fatalf("message %q should start with %s and mention %q", err, c.code, c.mention)
			}
		})
	}
}

func TestCodeOf(t *testing.T) {
	if got := audit.CodeOf(fmt.Errorf("consume: %w", audit.ErrApprovalUsed)); got != audit.CodeApprovalUsed {
		t.Errorf("used: %q", got)
	}
	if got := audit.CodeOf(fmt.Errorf("approval x: %w", audit.ErrNotFound)); got != audit.CodeApprovalNotFound {
		t.Errorf("not found: %q", got)
	}
	if got := audit.CodeOf(errors.New("disk full")); got != "" {
		t.Errorf("other error got code %q", got)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(a *audit.Approval, d *audit.Decision)
		want    error
		mention string
	}{
		{"once", func(*audit.Approval, *audit.Decision) {}, nil, ""},
		{"once with expiry", func(a *audit.Approval, _ *audit.Decision) { a.Until = t0.Add(time.Minute) }, nil, ""},
		{"scope", func(a *audit.Approval, _ *audit.Decision) { *a = *scopeApproval() }, nil, ""},
		{"rejection with note", func(a *audit.Approval, _ *audit.Decision) { a.Verdict, a.Once, a.Note = audit.Rejected, false, "no" }, nil, ""},
		{"decision not pending", func(_ *audit.Approval, d *audit.Decision) { d.Outcome = audit.OutcomeMayAct }, audit.ErrNotPending, "is MAY_ACT"},
		{"refused decision", func(_ *audit.Approval, d *audit.Decision) { d.Outcome = audit.OutcomeRefused }, audit.ErrNotPending, "REFUSED"},
		{"no approver", func(a *audit.Approval, _ *audit.Decision) { a.Approver = " " }, audit.ErrInvalidApproval, "--approver"},
		{"rejection without note", func(a *audit.Approval, _ *audit.Decision) { a.Verdict = audit.Rejected }, audit.ErrInvalidApproval, "--note"},
		{"unknown verdict", func(a *audit.Approval, _ *audit.Decision) { a.Verdict = "maybe" }, audit.ErrInvalidApproval, "verdict"},
		{"past expiry", func(a *audit.Approval, _ *audit.Decision) { a.Until = t0.Add(-time.Second) }, audit.ErrInvalidApproval, "not in the future"},
		{"once and scope", func(a *audit.Approval, _ *audit.Decision) { a.Scope = scopeApproval().Scope }, audit.ErrInvalidApproval, "not both"},
		{"neither once nor scope", func(a *audit.Approval, _ *audit.Decision) { a.Once = false }, audit.ErrInvalidApproval, "once"},
		{"scope without expiry", func(a *audit.Approval, _ *audit.Decision) { *a = *scopeApproval(); a.Until = time.Time{} }, audit.ErrInvalidApproval, "--until"},
		{"scope without proposition", func(a *audit.Approval, _ *audit.Decision) { *a = *scopeApproval(); a.Scope.PropositionID = "" }, audit.ErrInvalidApproval, "proposition"},
		{"scope not covering its decision", func(a *audit.Approval, _ *audit.Decision) { *a = *scopeApproval(); a.Scope.ToolName = "sh" }, audit.ErrInvalidApproval, "must cover"},
		{"other decision", func(a *audit.Approval, _ *audit.Decision) { a.DecisionID = "0190-zz" }, audit.ErrInvalidApproval, "decision_id"},
		{"empty scope", func(a *audit.Approval, _ *audit.Decision) {
			*a = *scopeApproval()
			a.Scope = &audit.Scope{PropositionID: "P-db"}
		}, audit.ErrInvalidApproval, "names no action kind, tool or concepts"},
		{"scope of a guard-only decision", func(a *audit.Approval, d *audit.Decision) {
			*a = *scopeApproval()
			d.PropositionID, a.Scope = "", &audit.Scope{ToolName: "psql", Concepts: []string{"database", "schema"}}
		}, nil, ""},
		{"scope naming a proposition the guard-only decision did not", func(a *audit.Approval, d *audit.Decision) { *a = *scopeApproval(); d.PropositionID = "" }, audit.ErrInvalidApproval, `is not the answered decision's ""`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, d := onceApproval(), answered()
			c.edit(a, d)
			err := a.Validate(d, t0)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("Validate = %v, want %v", err, c.want)
			}
			if err != nil && !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("message %q should mention %q", err, c.mention)
			}
		})
	}
}

func TestHeadRoundTrip(t *testing.T) {
	h := audit.Head{Seq: 42, Hash: strings.Repeat("ab", 32)}
	got, err := audit.ParseHead(strings.ToUpper(h.String()))
	if err != nil || got != h {
		t.Fatalf("ParseHead(%q) = %v, %v", h.String(), got, err)
	}
	for _, bad := range []string{"42", "x:ab", "-1:" + h.Hash, "4:abcd"} {
		if _, err := audit.ParseHead(bad); err == nil {
			t.Errorf("ParseHead(%q) accepted", bad)
		}
	}
}

func TestNewIDIsTimeOrdered(t *testing.T) {
	prev := audit.NewID()
	for range 1000 {
		id := audit.NewID()
		if id <= prev {
			t.Fatalf("%s after %s", id, prev)
		}
		prev = id
	}
}

// TestCoversAcrossJSON: an approval read back from a log (its ids through
// JSON, lone surrogates become U+FFFD) still covers the fresh call whose
// ids carry the raw WTF-8 bytes.
func TestCoversAcrossJSON(t *testing.T) {
	d := answered()
	d.PropositionID, d.Concepts = "P-\xed\xa0\x80", []string{"db-\xff"}
	a := onceApproval()
	a.Action = new(d.Action())
	body, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var stored audit.Approval
	if err := json.Unmarshal(body, &stored); err != nil {
		t.Fatal(err)
	}
	if err := stored.Covers(d, t0); err != nil {
		t.Fatalf("once: %v", err)
	}
	stored.Once, stored.Until = false, t0.Add(time.Hour)
	stored.Scope = &audit.Scope{PropositionID: "P-\xed\xa0\x80", Concepts: []string{"db-\xff"}}
	if err := stored.Covers(d, t0); err != nil {
		t.Fatalf("scope: %v", err)
	}
}

// Differs names the fields an idempotent retry must repeat, compared as
// Covers compares them.
func TestActionDiffers(t *testing.T) {
	a := answered().Action()
	same := a
	same.Concepts = []string{"Schema", "DATABASE"}
	if got := a.Differs(same); got != nil {
		t.Errorf("the same action: %v", got)
	}
	other := a
	other.PropositionID, other.Risk, other.Reversible = "P-x", "low", nil
	if got := strings.Join(a.Differs(other), ","); got != "proposition_id,risk,reversible" {
		t.Errorf("differs in %q", got)
	}
}

// An approval is honoured for at most the operator's maximum: refused
// where it is created when its until lies beyond, and capped at the gate
// whatever until the log claims.
func TestLifetime(t *testing.T) {
	a := onceApproval()
	a.Until = t0.Add(audit.DefaultMaxLifetime + time.Second)
	if err := a.CheckLifetime(t0, 0); !errors.Is(err, audit.ErrInvalidApproval) || !strings.Contains(err.Error(), "maximum 24h0m0s") {
		t.Fatalf("until past the default maximum: %v", err)
	}
	if err := a.CheckLifetime(t0, 48*time.Hour); err != nil {
		t.Fatalf("within a raised maximum: %v", err)
	}
	a.Until = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	if err := a.CheckLifetime(t0, 0); err == nil {
		t.Fatal("until 9999-12-31 accepted")
	}
	capped := a.Capped(time.Hour)
	if !capped.Until.Equal(t0.Add(time.Hour)) || !a.Until.Equal(time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("capped until %s (receiver %s)", capped.Until, a.Until)
	}
	if err := capped.Covers(answered(), t0.Add(time.Hour)); !errors.Is(err, audit.ErrApprovalExpired) {
		t.Fatalf("a log row claiming until 9999 is honoured past the maximum: %v", err)
	}
	a.Until = time.Time{}
	if got := a.Capped(0).Until; !got.Equal(t0.Add(audit.DefaultMaxLifetime)) {
		t.Fatalf("a once approval without until is honoured until %s", got)
	}
	a.Until = t0.Add(time.Minute)
	if got := a.Capped(0).Until; !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("an earlier until moved to %s", got)
	}
}

// A retry is answered from the record only within the replay window, and
// a MAY_ACT an approval gave only while the approval could give it now.
func TestReplayable(t *testing.T) {
	prev := answered()
	prev.Outcome = audit.OutcomeMayAct
	if err := audit.Replayable(prev, nil, t0.Add(audit.DefaultReplayWindow), 0); err != nil {
		t.Fatalf("within the window: %v", err)
	}
	if err := audit.Replayable(prev, nil, t0.Add(audit.DefaultReplayWindow+time.Second), 0); !errors.Is(err, audit.ErrReplayExpired) || !strings.Contains(err.Error(), "replay window 10m0s") {
		t.Fatalf("past the window: %v", err)
	}
	if err := audit.Replayable(prev, nil, t0.Add(time.Hour), 2*time.Hour); err != nil {
		t.Fatalf("within a wider window: %v", err)
	}
	scope := scopeApproval()
	scope.Until = t0.Add(time.Minute)
	if err := audit.Replayable(prev, scope, t0.Add(time.Minute-time.Second), 0); err != nil {
		t.Fatalf("scope still valid: %v", err)
	}
	err := audit.Replayable(prev, scope, t0.Add(time.Minute+4*time.Second), 0)
	if !errors.Is(err, audit.ErrReplayExpired) || !errors.Is(err, audit.ErrApprovalExpired) {
		t.Fatalf("scope expired 4 s ago: %v", err)
	}
	once := onceApproval().Capped(time.Minute)
	if err := audit.Replayable(prev, once, t0.Add(2*time.Minute), time.Hour); !errors.Is(err, audit.ErrApprovalExpired) {
		t.Fatalf("a once approval past the maximum lifetime: %v", err)
	}
}
