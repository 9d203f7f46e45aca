package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/internal/termtext"
)

type answerFlags struct {
	logFlags
	once                           bool
	scope                          bool
	anyAgent                       bool
	prop, kind, concepts, toolName string
	until, approver, note          string
	maxLifetime                    time.Duration
	stale                          time.Duration
	key                            string
}

func runApprove(e *env, args []string) int {
	var f answerFlags
	fs := flag.NewFlagSet("approve", flag.ContinueOnError)
	f.register(fs)
	fs.BoolVar(&f.once, "once", false, "")
	fs.BoolVar(&f.scope, "scope", false, "")
	fs.StringVar(&f.prop, "scope-proposition", "", "")
	fs.StringVar(&f.kind, "scope-kind", "", "")
	fs.StringVar(&f.concepts, "scope-concepts", "", "")
	fs.StringVar(&f.toolName, "scope-tool", "", "")
	fs.BoolVar(&f.anyAgent, "any-agent", false, "")
	fs.StringVar(&f.until, "until", "", "")
	fs.StringVar(&f.approver, "approver", "", "")
	fs.StringVar(&f.note, "note", "", "")
	fs.DurationVar(&f.maxLifetime, "max-lifetime", audit.DefaultMaxLifetime, "")
	fs.StringVar(&f.key, "key", "", "")
	pos, code := parse(e, fs, usageApprove, args)
	if code >= 0 {
		return code
	}
	a, msg := f.approval(pos, e.now())
	if msg != "" {
		return usageError(e.stderr, "approve: "+msg)
	}
	return answer(e, &f, "approve", a)
}

// approval builds the approval the flags describe, or says what is wrong.
func (f *answerFlags) approval(pos []string, now time.Time) (*audit.Approval, string) {
	if len(pos) != 1 {
		return nil, "give exactly one DECISION_ID (from the may_act answer or `ewp-audit list --pending`)"
	}
	if msg := approverProblem(f.approver); msg != "" {
		return nil, msg
	}
	scoped := f.scope || f.prop != "" || f.kind != "" || f.concepts != "" || f.toolName != ""
	switch {
	case f.once && scoped:
		return nil, "--once and a scope exclude each other: --once approves this exact action once, a scope approves actions like it until --until"
	case !f.once && !scoped:
		return nil, "say what you approve: --once (this exact action, one use) or a scope (--scope and/or --scope-proposition/--scope-kind/--scope-concepts/--scope-tool, with --until)"
	case scoped && f.until == "":
		return nil, "a scope approval needs --until TIME (RFC 3339, or a duration such as 2h)"
	case scoped && f.kind == "" && f.concepts == "" && f.toolName == "":
		return nil, "a scope names what it covers: at least one of --scope-kind, --scope-tool, --scope-concepts (a scope of the proposition alone would cover every action on it)"
	case f.maxLifetime <= 0:
		return nil, "--max-lifetime wants a positive duration such as 24h"
	}
	a := &audit.Approval{DecisionID: pos[0], Verdict: audit.Approved, Approver: f.approver, Note: f.note, Once: f.once, AnyAgent: f.anyAgent}
	if f.until != "" {
		t, err := parseTime(f.until, now, true)
		if err != nil {
			return nil, "--until: " + err.Error()
		}
		a.Until = t
		if err := a.CheckLifetime(now, f.maxLifetime); err != nil {
			return nil, "--until: " + strings.TrimPrefix(err.Error(), audit.ErrInvalidApproval.Error()+": ") + " (--max-lifetime)"
		}
	}
	if scoped {
		a.Scope = &audit.Scope{PropositionID: f.prop, ActionKind: f.kind, Concepts: splitList(f.concepts), ToolName: f.toolName}
	}
	return a, ""
}

// approverProblem says what is wrong with an --approver name, or "" (an
// empty one is the key's name). The name is recorded and shown on every
// screen that lists the approval, so it must print as it reads: no
// control or format characters (as the console refuses them at sign-in;
// the key's NAME/SOMEONE form lets the part after the slash be anything).
func approverProblem(name string) string {
	if !termtext.Printable(name) {
		return fmt.Sprintf("--approver %s: a name must not hold control or format characters (newlines, escapes, bidi overrides) or invalid UTF-8", esc(name))
	}
	return ""
}

func runReject(e *env, args []string) int {
	var f answerFlags
	fs := flag.NewFlagSet("reject", flag.ContinueOnError)
	f.register(fs)
	fs.StringVar(&f.approver, "approver", "", "")
	fs.StringVar(&f.note, "note", "", "")
	fs.DurationVar(&f.stale, "stale", 0, "")
	fs.StringVar(&f.key, "key", "", "")
	pos, code := parse(e, fs, usageReject, args)
	if code >= 0 {
		return code
	}
	switch {
	case f.stale != 0 && len(pos) > 0:
		return usageError(e.stderr, "reject: give a DECISION_ID or --stale DURATION, not both")
	case f.stale < 0:
		return usageError(e.stderr, "reject: --stale wants a positive duration, e.g. 1h: the calls waiting longer are rejected")
	case approverProblem(f.approver) != "":
		return usageError(e.stderr, "reject: "+approverProblem(f.approver))
	case f.stale > 0 && strings.TrimSpace(f.note) == "":
		return usageError(e.stderr, "reject --stale: --note TEXT is required (it is what every agent is told)")
	case f.stale > 0:
		return rejectStale(e, &f)
	case len(pos) != 1:
		return usageError(e.stderr, "reject: give exactly one DECISION_ID")
	case strings.TrimSpace(f.note) == "":
		return usageError(e.stderr, "reject: --note TEXT is required: it is what the agent is told (why not, or what to change)")
	}
	return answer(e, &f, "reject", &audit.Approval{DecisionID: pos[0], Verdict: audit.Rejected, Approver: f.approver, Note: f.note})
}

// answer signs an approval or rejection with the operator's key (--key),
// stores it and prints it. The key is read before the log is opened, so
// a missing key changes nothing.
func answer(e *env, f *answerFlags, name string, a *audit.Approval) int {
	signer, code := f.signer(e, name, a.Approver)
	if code >= 0 {
		return code
	}
	lf := &f.logFlags
	l, code := lf.open(e, name, false)
	if code >= 0 {
		return code
	}
	defer l.Close()
	d, err := l.Decision(e.ctx, a.DecisionID)
	if errors.Is(err, audit.ErrNotFound) {
		err = fmt.Errorf("%w: no decision %s in this log; list pending ones with `ewp-audit list --pending`", audit.ErrNotFound, a.DecisionID)
	}
	if err != nil {
		return failed(e, name, err)
	}
	if a.Scope != nil && a.Scope.PropositionID == "" {
		// A scope always names its proposition; by default the one of the
		// decision it answers.
		a.Scope.PropositionID = d.PropositionID
	}
	if err := signer.Sign(a, d, e.now()); err != nil {
		return failed(e, name, err)
	}
	closed, err := audit.Answer(e.ctx, l, a, signWith(signer, e.now()))
	if err != nil {
		if strings.Contains(err.Error(), "SQLSTATE 42501") {
			// PostgreSQL: the replicas' role may not store approvals.
			err = fmt.Errorf("%w\nlog in as a member of ewp_operator to approve: the replicas' role (ewp_server) cannot store approvals", err)
		}
		return failed(e, name, err)
	}
	if lf.json {
		return printJSON(e, struct {
			*audit.Approval
			Superseded int `json:"superseded,omitempty"`
		}{a, closed})
	}
	printApproval(e.stdout, a, d)
	if closed > 0 {
		fmt.Fprintf(e.stdout, "closed %d identical older call(s) of the same caller as superseded by this answer\n", closed)
	}
	return exitOK
}

// signer loads the operator's key (--key) and checks that approver, when
// given, is a name it signs as; code is the exit code when it cannot.
// The key is read before the log is opened, so a missing key changes
// nothing.
func (f *answerFlags) signer(e *env, name, approver string) (*audit.Signer, int) {
	path, err := keyFile(f.key)
	if err != nil {
		return nil, usageError(e.stderr, name+": "+err.Error())
	}
	signer, err := audit.LoadSigner(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "ewp-audit %s: %s\nAn approval counts only when signed by an operator key the server trusts; make one with `ewp-audit keygen`.\n", name, esc(err.Error()))
		return nil, exitUsage
	}
	if approver != "" && !signer.SignsAs(approver) {
		return nil, usageError(e.stderr, fmt.Sprintf("%s: --approver %q is not the name of the operator key %s (%q): the server accepts an approval only in its key's name (or NAME/SOMEONE); leave --approver out", name, approver, path, signer.Name))
	}
	return signer, -1
}

// signWith signs the answers a group operation stores on the operator's
// behalf, at the operator's clock now.
func signWith(s *audit.Signer, now time.Time) audit.SignFunc {
	return func(a *audit.Approval, d *audit.Decision) error { return s.Sign(a, d, now) }
}

// rejectStale rejects every pending call whose group has waited longer
// than --stale.
func rejectStale(e *env, f *answerFlags) int {
	signer, code := f.signer(e, "reject", f.approver)
	if code >= 0 {
		return code
	}
	approver := f.approver
	if approver == "" {
		approver = signer.Name
	}
	l, code := f.open(e, "reject", false)
	if code >= 0 {
		return code
	}
	defer l.Close()
	cutoff := e.now().Add(-f.stale)
	n, err := audit.RejectStale(e.ctx, l, cutoff, approver, f.note, signWith(signer, e.now()))
	if err != nil {
		return failed(e, "reject", err)
	}
	if f.json {
		return printJSON(e, struct {
			Rejected int       `json:"rejected"`
			Before   time.Time `json:"before"`
		}{n, cutoff.UTC()})
	}
	fmt.Fprintf(e.stdout, "rejected %d pending decision(s) waiting since before %s\n", n, cutoff.UTC().Format(time.RFC3339))
	return exitOK
}

// printApproval shows the answer a to decision d, and what the agent
// does next.
func printApproval(w io.Writer, a *audit.Approval, d *audit.Decision) {
	forwarded := d.Tool == audit.ToolCall // a gateway's or a client hook's call
	verb := "approved"
	if a.Verdict == audit.Rejected {
		verb = "rejected"
	}
	fmt.Fprintf(w, "%s decision %s\n", verb, esc(a.DecisionID))
	fmt.Fprintf(w, "  approval_id  %s\n", esc(a.ID))
	fmt.Fprintf(w, "  approver     %s at %s\n", esc(a.Approver), a.CreatedAt.Format(time.RFC3339))
	if a.KeyID != "" {
		fmt.Fprintf(w, "  signed by    %s\n", esc(a.KeyID))
	}
	if b := bindingText(a); b != "" && a.Verdict == audit.Approved {
		fmt.Fprintf(w, "  for          %s\n", esc(b))
	}
	if a.Verdict == audit.Approved {
		switch {
		case a.Once && forwarded:
			fmt.Fprintf(w, "  covers       once: the identical call (same agent, tool and arguments), one time\n")
		case a.Once:
			fmt.Fprintf(w, "  covers       once: exactly this action, one may_act call\n")
		case a.Scope != nil:
			fmt.Fprintf(w, "  covers       scope: %s\n", esc(scopeText(a.Scope)))
		}
		if a.Until.IsZero() {
			fmt.Fprintf(w, "  until        none given: the gate honours it at most its --approval-max-lifetime (default %s) after %s\n",
				audit.DefaultMaxLifetime, a.CreatedAt.Format(time.RFC3339))
		} else {
			fmt.Fprintf(w, "  until        %s\n", a.Until.Format(time.RFC3339))
		}
	}
	if a.Note != "" {
		fmt.Fprintf(w, "  note         %s\n", esc(a.Note))
	}
	if act := a.Action; act != nil {
		fmt.Fprintf(w, "  action       %s\n", esc(actionText(*act)))
	}
	if a.Verdict == audit.Approved {
		fmt.Fprintln(w, nextStep(a, d, forwarded))
	}
}

// nextStep is what the agent does with an approval. A forwarded call (a
// gateway's or a client hook's) carries no approval id: the gate finds a
// single-use approval by the call itself, and nothing else.
func nextStep(a *audit.Approval, d *audit.Decision, forwarded bool) string {
	switch {
	case forwarded && a.Once:
		return "The identical call (" + esc(d.ToolName) + ", same agent and arguments) now passes once: the agent retries it as it was; it has no approval id to handle."
	case forwarded:
		return "Note: " + esc(d.ToolName) + " came through the gateway or a client hook, which lets a call through only on a single-use approval (--once) of that very call; this approval does not let it through. Approve the decision with --once."
	}
	return fmt.Sprintf("The agent repeats its may_act call with \"approval_id\": %s.", strconv.Quote(a.ID))
}

func scopeText(s *audit.Scope) string {
	parts := []string{"proposition " + s.PropositionID}
	if s.PropositionID == "" {
		parts[0] = "calls naming no proposition (the guard alone judges them)"
	}
	if s.ActionKind != "" {
		parts = append(parts, "action_kind "+s.ActionKind)
	}
	if len(s.Concepts) > 0 {
		parts = append(parts, "concepts within "+strings.Join(s.Concepts, ","))
	}
	if s.ToolName != "" {
		parts = append(parts, "tool "+s.ToolName)
	}
	return strings.Join(parts, ", ")
}

func actionText(a audit.Action) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("proposition", a.PropositionID)
	add("id", a.ActionID)
	add("kind", a.ActionKind)
	add("risk", a.Risk)
	if a.Reversible != nil {
		add("reversible", fmt.Sprint(*a.Reversible))
	}
	add("concepts", strings.Join(a.Concepts, ","))
	add("cardinality", a.Cardinality)
	if a.MinDepth != nil {
		add("min_depth", fmt.Sprint(*a.MinDepth))
	}
	add("tool", a.ToolName)
	if len(a.ArgumentsHash) > 12 {
		add("arguments", "sha256:"+a.ArgumentsHash[:12]+"…")
	} else {
		add("arguments", a.ArgumentsHash)
	}
	return strings.Join(parts, " ")
}

func printJSON(e *env, v any) int {
	enc := json.NewEncoder(termtext.JSONWriter(e.stdout))
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(e.stderr, "ewp-audit: write output: %v\n", err)
		return exitLog
	}
	return exitOK
}
