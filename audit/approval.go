package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ewp-go/ewp/grounding"
)

// Action is what a decision judged: the gate input of a may_act call
// except its time, arguments by hash. An Approval carries the Action of
// the decision it answers, so checking whether it covers a later call
// needs no second lookup. The snapshot is not part of it: the evidence
// is judged afresh on every call.
type Action struct {
	PropositionID string   `json:"proposition_id"`
	ActionID      string   `json:"action_id,omitempty"`
	ActionKind    string   `json:"action_kind,omitempty"`
	Risk          string   `json:"risk,omitempty"`
	Reversible    *bool    `json:"reversible,omitempty"`
	Concepts      []string `json:"concepts,omitempty"`
	Cardinality   string   `json:"cardinality,omitempty"`
	MinDepth      *int     `json:"min_depth,omitempty"`
	ToolName      string   `json:"tool_name,omitempty"`
	ArgumentsHash string   `json:"arguments_hash,omitempty"`
	// RiskPolicy is the risk policy the call was judged under (only an
	// ingest caller may send one), as the decision records it.
	RiskPolicy any `json:"risk_policy,omitempty"`
}

// Action returns the decision's proposition and action.
func (d *Decision) Action() Action {
	return Action{
		PropositionID: d.PropositionID, ActionID: d.ActionID, ActionKind: d.ActionKind,
		Risk: d.Risk, Reversible: d.Reversible, Concepts: slices.Clone(d.Concepts),
		Cardinality: d.Cardinality, MinDepth: d.MinDepth,
		ToolName: d.ToolName, ArgumentsHash: d.ArgumentsHash, RiskPolicy: d.RiskPolicy,
	}
}

// Why an approval does not let a call go ahead. Each is a distinct error
// (test with errors.Is) with a code (CodeOf) for the approval layer's
// reasons and the MCP refusal.
var (
	// ErrApprovalRejected: the operator rejected the decision (or asked
	// for changes, which is a rejection with a note).
	ErrApprovalRejected = errors.New("audit: the approval is a rejection")
	// ErrApprovalExpired: the server clock is at or past Until.
	ErrApprovalExpired = errors.New("audit: the approval has expired")
	// ErrApprovalWrongProposition: the call judges another proposition
	// than the approval's (Once) or its scope's.
	ErrApprovalWrongProposition = errors.New("audit: the approval is for another proposition")
	// ErrApprovalWrongAction: a Once approval presented with an action
	// that differs from the one it answered in any field.
	ErrApprovalWrongAction = errors.New("audit: the action differs from the approved one")
	// ErrApprovalOutOfScope: the action is outside a scope approval's
	// kind, tool or concepts.
	ErrApprovalOutOfScope = errors.New("audit: the action is outside the approval's scope")
	// ErrApprovalWrongAgent: the approval is bound to another agent than
	// the one presenting it (or answering it); only an approval widened
	// with AnyAgent passes for every agent.
	ErrApprovalWrongAgent = errors.New("audit: the approval is bound to another agent")
)

// Errors of storing an approval.
var (
	// ErrInvalidApproval: the approval itself is malformed (no approver, a
	// scope without expiry, …); the message names the field.
	ErrInvalidApproval = errors.New("audit: invalid approval")
	// ErrNotPending: only a REQUIRE_CONFIRMATION decision can be approved
	// or rejected.
	ErrNotPending = errors.New("audit: the decision does not await confirmation")
	// ErrAnswered: the decision already has an approval or a rejection; a
	// decision is answered once (the agent's next call is a new decision).
	ErrAnswered = errors.New("audit: the decision is already answered")
)

// Codes of the approval refusals, in the style of the EWP codes.
const (
	CodeApprovalNotFound         = "EWP_REFUSE_APPROVAL_NOT_FOUND"
	CodeApprovalRejected         = "EWP_REFUSE_APPROVAL_REJECTED"
	CodeApprovalExpired          = "EWP_REFUSE_APPROVAL_EXPIRED"
	CodeApprovalUsed             = "EWP_REFUSE_APPROVAL_USED"
	CodeApprovalWrongProposition = "EWP_REFUSE_APPROVAL_WRONG_PROPOSITION"
	CodeApprovalWrongAction      = "EWP_REFUSE_APPROVAL_WRONG_ACTION"
	CodeApprovalOutOfScope       = "EWP_REFUSE_APPROVAL_OUT_OF_SCOPE"
	CodeApprovalWrongAgent       = "EWP_REFUSE_APPROVAL_AGENT"
	CodeApprovalUnsigned         = "EWP_REFUSE_APPROVAL_UNSIGNED"
	CodeApprovalBadSignature     = "EWP_REFUSE_APPROVAL_BAD_SIGNATURE"
	CodeApprovalUnknownKey       = "EWP_REFUSE_APPROVAL_UNKNOWN_KEY"
	CodeNoOperatorKeys           = "EWP_REFUSE_NO_OPERATOR_KEYS"
	CodeApprovalNotOnChain       = "EWP_REFUSE_APPROVAL_NOT_ON_CHAIN"
)

var codes = []struct {
	err  error
	code string
}{
	{ErrNotFound, CodeApprovalNotFound},
	{ErrApprovalRejected, CodeApprovalRejected},
	{ErrApprovalExpired, CodeApprovalExpired},
	{ErrApprovalUsed, CodeApprovalUsed},
	{ErrApprovalWrongProposition, CodeApprovalWrongProposition},
	{ErrApprovalWrongAction, CodeApprovalWrongAction},
	{ErrApprovalOutOfScope, CodeApprovalOutOfScope},
	{ErrApprovalWrongAgent, CodeApprovalWrongAgent},
	{ErrApprovalUnsigned, CodeApprovalUnsigned},
	{ErrApprovalBadSignature, CodeApprovalBadSignature},
	{ErrApprovalUnknownKey, CodeApprovalUnknownKey},
	{ErrNoOperatorKeys, CodeNoOperatorKeys},
	{ErrApprovalNotOnChain, CodeApprovalNotOnChain},
}

// CodeOf returns the approval refusal code of err (from Covers, RecordUse
// or a lookup that found no approval), or "" for any other error.
func CodeOf(err error) string {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}

// CoverageError says why an approval does not cover a call: Reason is
// one of the ErrApproval* values (errors.Is works on the error), Detail
// names the field and both values, for the approval layer's reasons (the
// server adds what the agent should do next).
type CoverageError struct {
	ApprovalID string
	Reason     error
	Detail     string
}

func (e *CoverageError) Error() string {
	return fmt.Sprintf("%s: approval %s: %s", CodeOf(e.Reason), e.ApprovalID, e.Detail)
}

func (e *CoverageError) Unwrap() error { return e.Reason }

// Code is the refusal code of the reason.
func (e *CoverageError) Code() string { return CodeOf(e.Reason) }

// Covers reports whether the approval lets decision d (a fresh judgement
// of a call presenting it) go ahead at server time now; nil when it does.
// It checks, in order: approved (not a rejection), unexpired, the agent
// it is bound to (unless AnyAgent: ErrApprovalWrongAgent), the same
// proposition, and then for a Once approval every field of the gate
// input the answered decision judged except its time (id, kind, risk,
// reversible, concepts as a set, cardinality, min_depth, tool, arguments
// hash, risk policy), for a scope approval the scope (see Scope) within
// the answered action's bounds: no more risk, no less reversibility, no
// laxer risk policy. The gate applies its maximum lifetime first
// (Capped). Whether a
// Once approval is still unused is not its business: that is the store's
// atomic RecordUse (ErrApprovalUsed). Nor is the evidence: an approval
// lifts only REQUIRE_CONFIRMATION, which the caller decides.
func (a *Approval) Covers(d *Decision, now time.Time) error {
	fail := func(reason error, format string, args ...any) error {
		return &CoverageError{ApprovalID: a.ID, Reason: reason, Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case a.Verdict != Approved:
		note := ""
		if a.Note != "" {
			note = fmt.Sprintf(" (note: %q)", a.Note)
		}
		return fail(ErrApprovalRejected, "%s rejected decision %s%s", a.Approver, a.DecisionID, note)
	case !a.Until.IsZero() && !now.Before(a.Until):
		return fail(ErrApprovalExpired, "expired at %s (server time %s)",
			a.Until.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case a.Action == nil:
		return fail(ErrApprovalWrongAction, "the approval records no action to compare with")
	case !a.AnyAgent && AsJSON(a.Agent) != AsJSON(d.Agent):
		return fail(ErrApprovalWrongAgent, "the approval is bound to agent %q, and agent %q presented it; an operator widens an approval to every agent with `ewp-audit approve --any-agent`", AsJSON(a.Agent), AsJSON(d.Agent))
	}
	if a.Once || a.Scope == nil {
		return a.coversOnce(d, fail)
	}
	return a.coversScope(d, fail)
}

type failer func(reason error, format string, args ...any) error

func (a *Approval) coversOnce(d *Decision, fail failer) error {
	want, got := a.Action.jsonForm(), d.Action().jsonForm()
	if got.PropositionID != want.PropositionID {
		return fail(ErrApprovalWrongProposition, "approved for proposition %q, presented for %q", want.PropositionID, got.PropositionID)
	}
	if diff := actionDiff(want, got); diff != "" {
		return fail(ErrApprovalWrongAction, "a once approval covers exactly the action of decision %s; this one differs in %s", a.DecisionID, diff)
	}
	return nil
}

func (a *Approval) coversScope(d *Decision, fail failer) error {
	s, act := a.Scope.jsonForm(), d.Action().jsonForm()
	if act.PropositionID != s.PropositionID {
		return fail(ErrApprovalWrongProposition, "the scope is proposition %q, presented for %q", s.PropositionID, act.PropositionID)
	}
	if why := widens(a.Action.jsonForm(), act); why != "" {
		return fail(ErrApprovalOutOfScope, "%s; a scope never covers more risk, less reversibility or a laxer risk policy than the decision it answered", why)
	}
	if s.ActionKind != "" && act.ActionKind != s.ActionKind {
		return fail(ErrApprovalOutOfScope, "action_kind %q is not the scope's %q", act.ActionKind, s.ActionKind)
	}
	if s.ToolName != "" && act.ToolName != s.ToolName {
		return fail(ErrApprovalOutOfScope, "tool_name %q is not the scope's %q", act.ToolName, s.ToolName)
	}
	if len(s.Concepts) > 0 {
		if len(act.Concepts) == 0 {
			return fail(ErrApprovalOutOfScope, "the action names no concepts; the scope covers actions on %s", strings.Join(s.Concepts, ", "))
		}
		scope := foldSet(s.Concepts)
		for _, c := range act.Concepts {
			if _, ok := slices.BinarySearch(scope, grounding.Fold(c)); !ok {
				return fail(ErrApprovalOutOfScope, "concept %q is not among the scope's %s", c, strings.Join(s.Concepts, ", "))
			}
		}
	}
	return nil
}

// actionDiff says in which fields got differs from want, with both
// values ("" if none).
func actionDiff(want, got Action) string {
	var out []string
	for _, d := range diffs(want, got) {
		out = append(out, fmt.Sprintf("%s (approved %q, presented %q)", d.name, d.want, d.got))
	}
	return strings.Join(out, ", ")
}

// Differs names the fields in which got differs from a (JSON names,
// proposition_id first), compared as Covers compares a once approval's
// action: through their JSON form, concepts as a set of folded names;
// nil when got is the same proposition and action. The server uses it
// to tell an idempotent retry from a new call.
func (a Action) Differs(got Action) []string {
	var names []string
	for _, d := range diffs(a.jsonForm(), got.jsonForm()) {
		names = append(names, d.name)
	}
	return names
}

type fieldDiff struct{ name, want, got string }

// diffs lists the fields of two actions (in JSON form) that differ.
// Concepts compare as sets of names folded as grounding folds them
// (NFC, then Unicode case folding): the guard judges "Database" and
// "database" as one concept, so an approval must too.
func diffs(want, got Action) []fieldDiff {
	var out []fieldDiff
	field := func(name, w, g string) {
		if w != g {
			out = append(out, fieldDiff{name, w, g})
		}
	}
	field("proposition_id", want.PropositionID, got.PropositionID)
	field("action_id", want.ActionID, got.ActionID)
	field("action_kind", want.ActionKind, got.ActionKind)
	field("risk", want.Risk, got.Risk)
	field("reversible", boolText(want.Reversible), boolText(got.Reversible))
	if !slices.Equal(foldSet(want.Concepts), foldSet(got.Concepts)) {
		out = append(out, fieldDiff{"concepts", strings.Join(want.Concepts, ","), strings.Join(got.Concepts, ",")})
	}
	field("cardinality", want.Cardinality, got.Cardinality)
	field("min_depth", intText(want.MinDepth), intText(got.MinDepth))
	field("tool_name", want.ToolName, got.ToolName)
	field("arguments_hash", want.ArgumentsHash, got.ArgumentsHash)
	field("risk_policy", canonicalJSON(want.RiskPolicy), canonicalJSON(got.RiskPolicy))
	return out
}

func intText(n *int) string {
	if n == nil {
		return ""
	}
	return fmt.Sprint(*n)
}

// canonicalJSON is v as JSON with object keys sorted, so a policy read
// back from the log (a map) compares equal to the one a call encoded (a
// struct's field order); "" for nil, and the error's text when v does
// not encode (it then equals nothing a call sends).
func canonicalJSON(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "unencodable: " + err.Error()
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return "undecodable: " + err.Error()
	}
	b, _ = json.Marshal(generic) // maps encode with sorted keys
	return string(b)
}

func boolText(b *bool) string {
	if b == nil {
		return ""
	}
	return fmt.Sprint(*b)
}

// foldSet is the sorted set of concept names as grounding folds them.
func foldSet(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = grounding.Fold(n)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Validate checks an approval before it is stored, against the decision
// it answers and the operator's clock: a known verdict and an approver; a
// rejection carries a note (it is what the agent is told); an approval is
// either Once (optionally with Until) or a scope with Until in the
// future; a scope names the answered decision's proposition ("" for a
// guard-only decision) and at least one of kind, tool and concepts, and
// covers the decision it answers; and only a REQUIRE_CONFIRMATION
// decision is answered. The maximum lifetime is not checked here: it is
// the operator's setting (CheckLifetime where approvals are created,
// Capped at the gate). A store
// calls it inside the transaction that stores the approval.
func (a *Approval) Validate(answered *Decision, now time.Time) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidApproval, fmt.Sprintf(format, args...))
	}
	if answered.Outcome != OutcomeRequireConfirmation {
		return fmt.Errorf("%w: decision %s is %s; only a REQUIRE_CONFIRMATION decision can be approved or rejected", ErrNotPending, answered.ID, answered.Outcome)
	}
	switch {
	case a.DecisionID != answered.ID:
		return bad("decision_id %q is not the answered decision %q", a.DecisionID, answered.ID)
	case a.AnyAgent && a.Agent != "":
		return bad("any_agent is set and agent is %q: an approval is bound to one agent or widened to every agent, not both", AsJSON(a.Agent))
	case !a.AnyAgent && AsJSON(a.Agent) != AsJSON(answered.Agent):
		return fmt.Errorf("%w: %w: the approval is bound to agent %q, the answered decision %s was made for agent %q", ErrInvalidApproval, ErrApprovalWrongAgent, AsJSON(a.Agent), answered.ID, AsJSON(answered.Agent))
	case strings.TrimSpace(a.Approver) == "":
		return bad("approver is empty; name the person who decides (--approver NAME)")
	case a.Verdict == Rejected:
		if strings.TrimSpace(a.Note) == "" {
			return bad("a rejection needs a note saying why or what to change (--note TEXT)")
		}
		return nil
	case a.Verdict != Approved:
		return bad("verdict %q: want %q or %q", a.Verdict, Approved, Rejected)
	case !a.Until.IsZero() && !now.Before(a.Until):
		return bad("until %s is not in the future (now %s)", a.Until.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case a.Once && a.Scope != nil:
		return bad("an approval is either once or a scope, not both")
	case a.Once:
		return nil
	case a.Scope == nil:
		return bad("say what is approved: once (this exact action) or a scope")
	case a.Until.IsZero():
		return bad("a scope approval needs an expiry (--until TIME): a scope without end is a standing permission, which belongs in policy")
	case a.Scope.PropositionID != answered.PropositionID:
		return bad("scope.proposition_id %q is not the answered decision's %q (\"\" when it judged no proposition)", a.Scope.PropositionID, answered.PropositionID)
	case a.Scope.ActionKind == "" && a.Scope.ToolName == "" && len(a.Scope.Concepts) == 0:
		return bad("the scope names no action kind, tool or concepts, so it would cover every action on its proposition; name at least one (--scope-kind, --scope-tool, --scope-concepts)")
	}
	probe := *a
	probe.Action = new(answered.Action())
	if err := probe.Covers(answered, now); err != nil {
		return bad("the scope must cover the decision it answers: %v", err)
	}
	return nil
}

// jsonForm is the action as it reads back from JSON: encoding/json
// replaces each byte of invalid UTF-8 with U+FFFD, and ids may carry such
// bytes (the kernel keeps lone surrogates as WTF-8). An approval read from
// a log and a fresh call must compare equal when their ids were equal.
func (a Action) jsonForm() Action {
	a.PropositionID, a.ActionID, a.ActionKind = AsJSON(a.PropositionID), AsJSON(a.ActionID), AsJSON(a.ActionKind)
	a.Risk, a.ToolName, a.ArgumentsHash = AsJSON(a.Risk), AsJSON(a.ToolName), AsJSON(a.ArgumentsHash)
	a.Cardinality = AsJSON(a.Cardinality)
	a.Concepts = jsonTexts(a.Concepts)
	return a
}

func (s *Scope) jsonForm() *Scope {
	return &Scope{PropositionID: AsJSON(s.PropositionID), ActionKind: AsJSON(s.ActionKind),
		Concepts: jsonTexts(s.Concepts), ToolName: AsJSON(s.ToolName)}
}

func jsonTexts(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = AsJSON(s)
	}
	return out
}

// AsJSON is s as it reads back from a JSON body: encoding/json replaces
// every byte of invalid UTF-8 with U+FFFD (strings.ToValidUTF8 would
// replace a run of them with one). Ids may carry such bytes (the kernel
// keeps lone surrogates as WTF-8), so what is compared with a stored body
// must take this form.
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
