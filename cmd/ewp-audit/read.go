package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditstore"
	"github.com/ewp-go/ewp/audit/sqlite"
	"github.com/ewp-go/ewp/internal/plural"
	"github.com/ewp-go/ewp/internal/termtext"
)

// filterFlags select decisions (list and export).
type filterFlags struct {
	logFlags
	since, until, outcome, prop string
	pending                     bool
}

func (f *filterFlags) register(fs *flag.FlagSet) {
	f.logFlags.register(fs)
	fs.StringVar(&f.since, "since", "", "")
	fs.StringVar(&f.until, "until", "", "")
	fs.StringVar(&f.outcome, "outcome", "", "")
	fs.StringVar(&f.prop, "proposition", "", "")
	fs.BoolVar(&f.pending, "pending", false, "")
}

func (f *filterFlags) filter(now time.Time) (audit.Filter, error) {
	flt := audit.Filter{Outcome: audit.Outcome(strings.ToUpper(f.outcome)), PropositionID: f.prop, Pending: f.pending}
	var err error
	if f.since != "" {
		if flt.Since, err = parseTime(f.since, now, false); err != nil {
			return flt, fmt.Errorf("--since: %w", err)
		}
	}
	if f.until != "" {
		if flt.Until, err = parseTime(f.until, now, false); err != nil {
			return flt, fmt.Errorf("--until: %w", err)
		}
	}
	switch flt.Outcome {
	case "", audit.OutcomeMayAct, audit.OutcomeRequireConfirmation, audit.OutcomeDeny, audit.OutcomeRefused, audit.OutcomeAnswered:
	default:
		return flt, fmt.Errorf("--outcome %q: want MAY_ACT, REQUIRE_CONFIRMATION, DENY, REFUSED or ANSWERED", f.outcome)
	}
	return flt, nil
}

func runList(e *env, args []string) int {
	var f filterFlags
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	f.register(fs)
	limit := fs.Int("limit", sqlite.DefaultLimit, "")
	after := fs.String("after", "", "")
	oldest := fs.Bool("oldest-first", false, "")
	watching := fs.Bool("watch", false, "")
	every := fs.Duration("interval", defaultWatchInterval, "")
	pos, code := parse(e, fs, usageList, args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return usageError(e.stderr, fmt.Sprintf("list: unexpected argument %q (filters are flags, e.g. --proposition %s)", pos[0], esc(pos[0])))
	}
	flt, err := f.filter(e.now())
	if err != nil {
		return usageError(e.stderr, "list: "+err.Error())
	}
	if *limit <= 0 {
		return usageError(e.stderr, "list: --limit must be positive (export streams everything)")
	}
	if *watching {
		if err := checkWatch(flt.Pending, f.json, *every); err != nil {
			return usageError(e.stderr, "list: "+err.Error())
		}
	}
	flt.Limit, flt.After = *limit, *after
	l, code := f.open(e, "list", true)
	if code >= 0 {
		return code
	}
	defer l.Close()
	if *watching {
		return watch(e, *every, func() int { return listOnce(e, l, flt, *oldest, f.json) })
	}
	return listOnce(e, l, flt, *oldest, f.json)
}

// listOnce prints one listing of l under flt.
func listOnce(e *env, l auditstore.Log, flt audit.Filter, oldest, asJSON bool) int {
	groups, err := pendingGroups(e, l, flt.Pending)
	if err != nil {
		return failed(e, "list", err)
	}
	rows := []listRow{} // an empty page is [] in --json, not null
	err = l.Each(e.ctx, sqlite.Query{Filter: flt, NewestFirst: !oldest}, func(d *audit.Decision) error {
		r := listRow{Decision: *d}
		if g, ok := groups[d.ID]; ok {
			if g.Newest.ID != d.ID {
				return nil // an identical older retry: listed with its group's newest
			}
			r.Count, r.Older = g.Count(), g.IDs[:len(g.IDs)-1]
		}
		if d.Outcome == audit.OutcomeRequireConfirmation {
			as, err := l.ApprovalsFor(e.ctx, d.ID)
			if err != nil {
				return err
			}
			r.Answer = "pending"
			if len(as) > 0 {
				r.Answer = as[0].Verdict
				r.AnsweredBy = as[0].ID
			}
		}
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return failed(e, "list", err)
	}
	next := ""
	if len(rows) == flt.Limit {
		next = rows[len(rows)-1].ID
	}
	if asJSON {
		return printJSON(e, struct {
			Decisions []listRow `json:"decisions"`
			NextAfter string    `json:"next_after,omitempty"`
		}{rows, next})
	}
	printList(e.stdout, rows, next)
	return exitOK
}

// listRow is a decision with, for a REQUIRE_CONFIRMATION one, its answer.
// With --pending, a row stands for its group of identical retries
// (audit.GroupPending): the newest decision, how many times the call was
// asked, and the older ones, which answering the row closes.
type listRow struct {
	audit.Decision
	Answer     string   `json:"answer,omitempty"` // pending | approved | rejected
	AnsweredBy string   `json:"answered_by,omitempty"`
	Count      int      `json:"count,omitempty"`
	Older      []string `json:"identical_older,omitempty"`
}

// pendingGroups maps each pending decision's id to its group, for
// list --pending; nil otherwise.
func pendingGroups(e *env, l audit.Log, pending bool) (map[string]audit.PendingGroup, error) {
	if !pending {
		return nil, nil
	}
	groups, err := audit.PendingGroups(e.ctx, l)
	if err != nil {
		return nil, err
	}
	out := map[string]audit.PendingGroup{}
	for _, g := range groups {
		for _, id := range g.IDs {
			out[id] = g
		}
	}
	return out, nil
}

func printList(w io.Writer, rows []listRow, next string) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no decisions match")
		return
	}
	for _, r := range rows {
		what := r.ActionKind
		if r.ActionID != "" {
			what += " " + r.ActionID
		}
		state := r.Code
		if r.Answer != "" {
			state = r.Answer
			if r.AnsweredBy != "" {
				state += " by " + r.AnsweredBy
			}
		}
		if r.Count > 1 {
			state += fmt.Sprintf(" (asked %d times)", r.Count)
		}
		fmt.Fprintf(w, "%s  %s  %-15s  %-20s  %-12s  %-14s  %s  %s\n", r.Time.Format(time.RFC3339), esc(r.ID), esc(r.Tool), esc(string(r.Outcome)),
			orDash(esc(r.Agent)), orDash(esc(r.PropositionID)), orDash(esc(strings.TrimSpace(what))), esc(state))
	}
	if next != "" {
		fmt.Fprintf(w, "(more: --after %s)\n", esc(next))
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// trail is a decision with everything that answered or used approvals
// around it.
type trail struct {
	Decision  *audit.Decision `json:"decision"`
	Presented *approvalTrail  `json:"presented_approval,omitempty"` // the approval this call presented
	Answers   []approvalTrail `json:"answers,omitempty"`            // approvals and rejections of this decision
	Results   []audit.Result  `json:"results,omitempty"`            // what the forwarded call did
}

type approvalTrail struct {
	Approval    audit.Approval `json:"approval"`
	Use         *sqlite.Use    `json:"use,omitempty"` // a once approval's consumption
	PresentedBy []presented    `json:"presented_by,omitempty"`
}

type presented struct {
	DecisionID string `json:"decision_id"`
	Outcome    string `json:"outcome"`
	Code       string `json:"code,omitempty"`
}

func runShow(e *env, args []string) int {
	var f logFlags
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	f.register(fs)
	pos, code := parse(e, fs, usageShow, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return usageError(e.stderr, "show: give exactly one DECISION_ID or APPROVAL_ID")
	}
	l, code := f.open(e, "show", true)
	if code >= 0 {
		return code
	}
	defer l.Close()
	t, err := buildTrail(e, l, pos[0])
	if err != nil {
		return failed(e, "show", err)
	}
	if f.json {
		return printJSON(e, t)
	}
	printTrail(e.stdout, t, f.where())
	return exitOK
}

// buildTrail finds id as a decision, or as an approval (then the trail of
// the decision it answers).
func buildTrail(e *env, l auditstore.Log, id string) (*trail, error) {
	d, err := l.Decision(e.ctx, id)
	if errors.Is(err, audit.ErrNotFound) {
		a, aerr := l.Approval(e.ctx, id)
		if aerr != nil {
			return nil, fmt.Errorf("%w: %s is neither a decision nor an approval in %s", audit.ErrNotFound, id, l.Path())
		}
		d, err = l.Decision(e.ctx, a.DecisionID)
	}
	if err != nil {
		return nil, err
	}
	t := &trail{Decision: d}
	if d.ApprovalID != "" {
		if a, err := l.Approval(e.ctx, d.ApprovalID); err == nil {
			at, err := approvalTrailOf(e, l, a)
			if err != nil {
				return nil, err
			}
			t.Presented = at
		} else if !errors.Is(err, audit.ErrNotFound) {
			return nil, err
		}
	}
	as, err := l.ApprovalsFor(e.ctx, d.ID)
	if err != nil {
		return nil, err
	}
	for i := range as {
		at, err := approvalTrailOf(e, l, &as[i])
		if err != nil {
			return nil, err
		}
		t.Answers = append(t.Answers, *at)
	}
	if t.Results, err = l.ResultsFor(e.ctx, d.ID); err != nil {
		return nil, err
	}
	return t, nil
}

func approvalTrailOf(e *env, l auditstore.Log, a *audit.Approval) (*approvalTrail, error) {
	at := &approvalTrail{Approval: *a}
	u, err := l.UseOf(e.ctx, a.ID)
	if err == nil {
		at.Use = u
	} else if !errors.Is(err, audit.ErrNotFound) {
		return nil, err
	}
	err = l.Each(e.ctx, sqlite.Query{ApprovalID: a.ID}, func(d *audit.Decision) error {
		at.PresentedBy = append(at.PresentedBy, presented{DecisionID: d.ID, Outcome: string(d.Outcome), Code: d.Code})
		return nil
	})
	return at, err
}

func printTrail(w io.Writer, t *trail, where string) {
	d := t.Decision
	fmt.Fprintf(w, "decision %s\n", esc(d.ID))
	row := func(k, v string) { // v is escaped here, whatever it was built from
		if v != "" {
			fmt.Fprintf(w, "  %-12s %s\n", k, esc(v))
		}
	}
	row("time", d.Time.Format(time.RFC3339Nano))
	row("tool", d.Tool)
	row("caller", callerText(d.Caller))
	row("agent", agentText(d))
	if d.PropositionID != "" {
		row("proposition", fmt.Sprintf("%s (view %s, sha256 %s)", d.PropositionID, orDash(d.ViewID), orDash(d.ViewHash)))
	}
	row("action", actionText(d.Action()))
	printArguments(w, d)
	if d.GraphVersion != 0 || len(d.PolicyIDs) > 0 {
		row("judged under", fmt.Sprintf("graph version %d, policies %s (set sha256 %s)", d.GraphVersion, orDash(strings.Join(d.PolicyIDs, ",")), orDash(d.PolicySetHash)))
	}
	for _, ly := range d.Layers {
		row("layer", fmt.Sprintf("%-10s %-20s %s", ly.Layer, ly.Decision, strings.Join(ly.Reasons, "; ")))
	}
	row("outcome", string(d.Outcome))
	row("code", d.Code)
	row("message", d.Message)
	row("idempotency", d.IdempotencyKey)
	for _, r := range t.Results {
		text := string(r.Status) + " at " + r.Time.Format(time.RFC3339Nano)
		if r.SHA256 != "" {
			text += ", sha256 " + r.SHA256
		}
		if r.Message != "" {
			text += ": " + r.Message
		}
		row("result", text)
	}
	if p := t.Presented; p != nil {
		fmt.Fprintf(w, "presented approval\n")
		printApprovalTrail(w, p)
	} else if d.ApprovalID != "" {
		fmt.Fprintf(w, "presented approval %s (not in this log)\n", esc(d.ApprovalID))
	}
	if d.Outcome == audit.OutcomeRequireConfirmation && len(t.Answers) == 0 {
		id := esc(d.ID)
		fmt.Fprintf(w, "pending: answer it with (signed with your operator key, --key FILE)\n  ewp-audit approve %s %s --once\n  ewp-audit reject %s %s --note WHY\n", where, id, where, id)
	}
	for i := range t.Answers {
		fmt.Fprintf(w, "answered by\n")
		printApprovalTrail(w, &t.Answers[i])
	}
}

// printArguments prints the action's recorded arguments, one line of
// their indented JSON a line, under the action: what the operator
// approves, not only its hash. ArgumentsText made them visible already;
// a line that still holds a control character is escaped whole.
func printArguments(w io.Writer, d *audit.Decision) {
	text := d.ArgumentsText()
	if text == "" {
		return
	}
	label := "arguments"
	for _, line := range strings.Split(text, "\n") {
		if !termtext.Printable(line) {
			line = esc(line)
		}
		fmt.Fprintf(w, "  %-12s %s\n", label, line)
		label = ""
	}
}

func printApprovalTrail(w io.Writer, at *approvalTrail) {
	a := at.Approval
	desc := a.Verdict
	switch {
	case a.Verdict == audit.Rejected:
	case a.Once:
		desc += ", once"
	case a.Scope != nil:
		desc += ", scope " + scopeText(a.Scope)
	}
	if !a.Until.IsZero() {
		desc += ", until " + a.Until.Format(time.RFC3339)
	}
	if b := bindingText(&a); b != "" && a.Verdict == audit.Approved {
		desc += ", for " + b
	}
	fmt.Fprintf(w, "  %s  %s by %s at %s\n", esc(a.ID), esc(desc), esc(a.Approver), a.CreatedAt.Format(time.RFC3339))
	if a.Note != "" {
		fmt.Fprintf(w, "    note: %s\n", esc(a.Note))
	}
	if at.Use != nil {
		fmt.Fprintf(w, "    used by decision %s at %s\n", esc(at.Use.UsedBy), time.Unix(0, at.Use.UsedNS).UTC().Format(time.RFC3339Nano))
	} else if a.Once && a.Verdict == audit.Approved {
		fmt.Fprintf(w, "    unused\n")
	}
	for _, p := range at.PresentedBy {
		fmt.Fprintf(w, "    presented by %s → %s %s\n", esc(p.DecisionID), esc(p.Outcome), esc(p.Code))
	}
}

func callerText(c audit.Caller) string {
	var parts []string
	if c.ClientName != "" {
		parts = append(parts, strings.TrimSpace(c.ClientName+" "+c.ClientVersion))
	}
	if c.Transport != "" {
		parts = append(parts, "via "+c.Transport)
	}
	if c.RemoteAddr != "" {
		parts = append(parts, "from "+c.RemoteAddr)
	}
	if c.Role != "" {
		parts = append(parts, "role "+c.Role)
	}
	if c.Credential != "" {
		parts = append(parts, "credential "+c.Credential)
	}
	return strings.Join(parts, ", ")
}

func runVerify(e *env, args []string) int {
	var f logFlags
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	f.register(fs)
	headArg := fs.String("head", "", "")
	pos, code := parse(e, fs, usageVerify, args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return usageError(e.stderr, fmt.Sprintf("verify: unexpected argument %q", pos[0]))
	}
	var want *audit.Head
	if *headArg != "" {
		h, err := audit.ParseHead(*headArg)
		if err != nil {
			return usageError(e.stderr, "verify: --head: "+err.Error())
		}
		want = &h
	}
	l, code := f.open(e, "verify", true)
	if code >= 0 {
		return code
	}
	defer l.Close()
	var rep sqlite.VerifyReport
	var err error
	if want != nil {
		rep, err = l.VerifyHead(e.ctx, *want)
	} else {
		rep, err = l.Verify(e.ctx)
	}
	var brk *sqlite.Break
	if err != nil && !errors.As(err, &brk) {
		printErr(e, "verify", err)
		return exitLog
	}
	if f.json {
		out := struct {
			OK bool `json:"ok"`
			sqlite.VerifyReport
			Message string `json:"message,omitempty"`
		}{OK: rep.OK(), VerifyReport: rep}
		if brk != nil {
			out.Message = brk.Error()
		}
		printJSON(e, out)
	} else {
		status := "ok"
		if brk != nil {
			status = "BROKEN"
		}
		fmt.Fprintf(e.stdout, "%s: checked %s (%s, %s, %s%s); head %s\n",
			status, plural.Count(rep.Events, "event", "events"), plural.Count(rep.Decisions, "decision", "decisions"),
			plural.Count(rep.Approvals, "approval", "approvals"), plural.Count(rep.Uses, "approval use", "approval uses"), agentCounts(rep), rep.Head)
		if want != nil && brk == nil {
			fmt.Fprintf(e.stdout, "the chain still holds head %s\n", want)
		}
	}
	if brk != nil {
		if !f.json {
			printErr(e, "verify", brk)
		}
		return exitBroken
	}
	return exitOK
}

// exported is a tool call's export line: the decision and, beside its
// members, the results the gateway or a hook recorded for it.
type exported struct {
	*audit.Decision
	Results []audit.Result `json:"results,omitempty"`
}

func runExport(e *env, args []string) int {
	var f filterFlags
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	f.register(fs)
	pos, code := parse(e, fs, usageExport, args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		return usageError(e.stderr, fmt.Sprintf("export: unexpected argument %q", pos[0]))
	}
	flt, err := f.filter(e.now())
	if err != nil {
		return usageError(e.stderr, "export: "+err.Error())
	}
	l, code := f.open(e, "export", true)
	if code >= 0 {
		return code
	}
	defer l.Close()
	// One line per decision, written as it is read: memory stays flat
	// however long the log.
	bw := bufio.NewWriterSize(e.stdout, 64<<10)
	enc := json.NewEncoder(termtext.JSONWriter(bw))
	n := 0
	err = l.Each(e.ctx, sqlite.Query{Filter: flt}, func(d *audit.Decision) error {
		n++
		if d.Tool != audit.ToolCall {
			return enc.Encode(d)
		}
		// A forwarded tool call's line also says what the call did.
		res, err := l.ResultsFor(e.ctx, d.ID)
		if err != nil {
			return err
		}
		return enc.Encode(exported{d, res})
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return failed(e, "export", err)
	}
	fmt.Fprintf(e.stderr, "ewp-audit export: %s decisions\n", strconv.Itoa(n))
	return exitOK
}

// agentCounts is what verify adds for the entries of agent identities
// and results, "" when the log has none (its line reads as before).
func agentCounts(rep sqlite.VerifyReport) string {
	var out string
	if rep.Agents > 0 || rep.Revocations > 0 {
		out += ", " + plural.Count(rep.Agents, "agent", "agents") + ", " + plural.Count(rep.Revocations, "revocation", "revocations")
	}
	if rep.Results > 0 {
		out += ", " + plural.Count(rep.Results, "result", "results")
	}
	return out
}
