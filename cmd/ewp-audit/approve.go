package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
)

type answerFlags struct {
	logFlags
	once                           bool
	scope                          bool
	prop, kind, concepts, toolName string
	until, approver, note          string
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
	fs.StringVar(&f.until, "until", "", "")
	fs.StringVar(&f.approver, "approver", "", "")
	fs.StringVar(&f.note, "note", "", "")
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
	scoped := f.scope || f.prop != "" || f.kind != "" || f.concepts != "" || f.toolName != ""
	switch {
	case f.once && scoped:
		return nil, "--once and a scope exclude each other: --once approves this exact action once, a scope approves actions like it until --until"
	case !f.once && !scoped:
		return nil, "say what you approve: --once (this exact action, one use) or a scope (--scope and/or --scope-proposition/--scope-kind/--scope-concepts/--scope-tool, with --until)"
	case scoped && f.until == "":
		return nil, "a scope approval needs --until TIME (RFC 3339, or a duration such as 2h)"
	}
	a := &audit.Approval{DecisionID: pos[0], Verdict: audit.Approved, Approver: f.approver, Note: f.note, Once: f.once}
	if f.until != "" {
		t, err := parseTime(f.until, now, true)
		if err != nil {
			return nil, "--until: " + err.Error()
		}
		a.Until = t
	}
	if scoped {
		a.Scope = &audit.Scope{PropositionID: f.prop, ActionKind: f.kind, Concepts: splitList(f.concepts), ToolName: f.toolName}
	}
	return a, ""
}

func runReject(e *env, args []string) int {
	var f answerFlags
	fs := flag.NewFlagSet("reject", flag.ContinueOnError)
	f.register(fs)
	fs.StringVar(&f.approver, "approver", "", "")
	fs.StringVar(&f.note, "note", "", "")
	fs.StringVar(&f.key, "key", "", "")
	pos, code := parse(e, fs, usageReject, args)
	if code >= 0 {
		return code
	}
	switch {
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
	path, err := keyFile(f.key)
	if err != nil {
		return usageError(e.stderr, name+": "+err.Error())
	}
	signer, err := audit.LoadSigner(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "ewp-audit %s: %v\nAn approval counts only when signed by an operator key the server trusts; make one with `ewp-audit keygen`.\n", name, err)
		return exitUsage
	}
	if a.Approver != "" && !signer.SignsAs(a.Approver) {
		return usageError(e.stderr, fmt.Sprintf("%s: --approver %q is not the name of the operator key %s (%q): the server accepts an approval only in its key's name (or NAME/SOMEONE); leave --approver out", name, a.Approver, path, signer.Name))
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
	if err := l.Approve(e.ctx, a); err != nil {
		if strings.Contains(err.Error(), "SQLSTATE 42501") {
			// PostgreSQL: the replicas' role may not store approvals.
			err = fmt.Errorf("%w\nlog in as a member of ewp_operator to approve: the replicas' role (ewp_server) cannot store approvals", err)
		}
		return failed(e, name, err)
	}
	if lf.json {
		return printJSON(e, a)
	}
	printApproval(e.stdout, a)
	return exitOK
}

func printApproval(w io.Writer, a *audit.Approval) {
	verb := "approved"
	if a.Verdict == audit.Rejected {
		verb = "rejected"
	}
	fmt.Fprintf(w, "%s decision %s\n", verb, a.DecisionID)
	fmt.Fprintf(w, "  approval_id  %s\n", a.ID)
	fmt.Fprintf(w, "  approver     %s at %s\n", a.Approver, a.CreatedAt.Format(time.RFC3339))
	if a.KeyID != "" {
		fmt.Fprintf(w, "  signed by    %s\n", a.KeyID)
	}
	if a.Verdict == audit.Approved {
		switch {
		case a.Once:
			fmt.Fprintf(w, "  covers       once: exactly this action, one may_act call\n")
		case a.Scope != nil:
			fmt.Fprintf(w, "  covers       scope: %s\n", scopeText(a.Scope))
		}
		if a.Until.IsZero() {
			fmt.Fprintf(w, "  until        no expiry\n")
		} else {
			fmt.Fprintf(w, "  until        %s\n", a.Until.Format(time.RFC3339))
		}
	}
	if a.Note != "" {
		fmt.Fprintf(w, "  note         %s\n", a.Note)
	}
	if act := a.Action; act != nil {
		fmt.Fprintf(w, "  action       %s\n", actionText(*act))
	}
	if a.Verdict == audit.Approved {
		fmt.Fprintf(w, "The agent repeats its may_act call with \"approval_id\": %q.\n", a.ID)
	}
}

func scopeText(s *audit.Scope) string {
	parts := []string{"proposition " + s.PropositionID}
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
	add("tool", a.ToolName)
	if len(a.ArgumentsHash) > 12 {
		add("arguments", "sha256:"+a.ArgumentsHash[:12]+"…")
	} else {
		add("arguments", a.ArgumentsHash)
	}
	return strings.Join(parts, " ")
}

func printJSON(e *env, v any) int {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(e.stderr, "ewp-audit: write output: %v\n", err)
		return exitLog
	}
	return exitOK
}
