package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/console/consolelink"
	"github.com/ewp-go/ewp/edgepolicy"
	"github.com/ewp-go/ewp/internal/termtext"
)

var outcomes = []audit.Outcome{audit.OutcomeMayAct, audit.OutcomeRequireConfirmation, audit.OutcomeDeny, audit.OutcomeRefused, audit.OutcomeAnswered}

type decisionsData struct {
	Outcome, Prop, Since, Until, After string
	Pending                            bool
	Outcomes                           []audit.Outcome
	Rows                               []audit.Decision
	Next                               string // the cursor of the next page, "" at the end
	Newest                             bool   // the page shown is the newest one
	NewestFirst                        bool   // rows run newest first; Next pages back
	Err                                string
}

// decisions is the feed, in the log's order (oldest first within a page),
// paginated by cursor; with no cursor and no filter it opens on the
// newest page, found from the background tail.
func (c *Console) decisions(w http.ResponseWriter, r *http.Request, s *session) {
	if c.cfg.Log == nil {
		c.errorPage(w, r, http.StatusNotFound, "No decision log", "This server runs without a decision log (--audit off), so there are no decisions to show.")
		return
	}
	q := r.URL.Query()
	d := decisionsData{Outcome: q.Get("outcome"), Prop: strings.TrimSpace(q.Get("prop")), Since: q.Get("since"), Until: q.Get("until"),
		After: q.Get("after"), Pending: q.Get("pending") == "on", Outcomes: outcomes}
	f := audit.Filter{Outcome: audit.Outcome(d.Outcome), PropositionID: d.Prop, Pending: d.Pending, After: d.After, Limit: pageSize}
	var err error
	if f.Since, err = parseFormTime(d.Since); err != nil {
		d.Err = "since: " + err.Error()
	}
	if f.Until, err = parseFormTime(d.Until); err != nil {
		d.Err = "until: " + err.Error()
	}
	list := c.cfg.Log.List
	switch {
	case c.cfg.ListNewest != nil && q.Get("from") != "start":
		list, d.NewestFirst, d.Newest = c.cfg.ListNewest, true, d.After == ""
	case d.After == "" && f == (audit.Filter{Limit: pageSize}) && q.Get("from") != "start":
		f.After, d.Newest = c.tail.newestCursor(pageSize), true
	}
	if d.Err == "" {
		if d.Rows, err = list(r.Context(), f); err != nil {
			d.Err = err.Error()
		}
	}
	if len(d.Rows) == pageSize {
		d.Next = d.Rows[len(d.Rows)-1].ID
	}
	c.render(w, r, http.StatusOK, "decisions", signedIn(s, "decisions", "Decisions", d))
}

// parseFormTime reads an <input type="datetime-local"> value as UTC.
func parseFormTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errors.New("want a time like 2026-12-01T14:30 (UTC)")
}

type decisionData struct {
	D         *audit.Decision
	Approvals []approvalRow
	Pending   bool
	JSON      string
	Layers    []layerRow
	RiskJSON  string
	Done      string
	Tomorrow  time.Time
	// CanSign: the console has a key to sign answers with (Config.Signer).
	CanSign bool
	// Placements are where the decision's policies sit in the graph.
	Placements []edgepolicy.Orphan
}

type layerRow struct {
	audit.Layer
	DetailJSON string
}

func (c *Console) decision(w http.ResponseWriter, r *http.Request, s *session) {
	if c.cfg.Log == nil {
		c.errorPage(w, r, http.StatusNotFound, "No decision log", "This server runs without a decision log.")
		return
	}
	d, status, err := c.loadDecision(r, r.URL.Query().Get("id"))
	if err != nil {
		c.errorPage(w, r, status, "No such decision", err.Error())
		return
	}
	d.Done = r.URL.Query().Get("done")
	c.render(w, r, http.StatusOK, "decision", signedIn(s, "decisions", "Decision "+d.D.ID, d))
}

func (c *Console) loadDecision(r *http.Request, id string) (*decisionData, int, error) {
	dec, err := c.cfg.Log.Decision(r.Context(), id)
	if errors.Is(err, audit.ErrNotFound) {
		return nil, http.StatusNotFound, errors.New("no decision " + strconvQuote(id) + " in the log")
	}
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	aps, err := c.cfg.Log.ApprovalsFor(r.Context(), id)
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	rows, err := c.trail(r, aps)
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	d := &decisionData{D: dec, Approvals: rows, JSON: pretty(dec), RiskJSON: pretty(dec.RiskPolicy), Tomorrow: c.defaultUntil(),
		CanSign: c.cfg.Signer != nil}
	d.Pending = dec.Outcome == audit.OutcomeRequireConfirmation && len(aps) == 0
	for _, p := range placements(c.cfg.Policies) {
		if slices.Contains(dec.PolicyIDs, p.PolicyID) {
			d.Placements = append(d.Placements, p)
		}
	}
	for _, l := range dec.Layers {
		row := layerRow{Layer: l}
		if l.Detail != nil {
			row.DetailJSON = pretty(l.Detail)
		}
		d.Layers = append(d.Layers, row)
	}
	return d, http.StatusOK, nil
}

func pretty(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	// An agent's text (its name, ids, reasons) keeps its bidi overrides
	// and format characters in JSON: made visible as escapes, the value
	// unchanged.
	return string(termtext.JSON(b))
}

type inboxData struct {
	CanSign  bool
	Rows     []inboxRow
	Next     string
	Tomorrow time.Time
	Err      string
	// Rejected is how many stale decisions the last reject-all closed.
	Rejected string
}

// inboxRow is one pending call: the newest decision of a group of
// identical retries from one caller (audit.GroupPending), how many times
// it was asked and since when.
type inboxRow struct {
	audit.Decision
	Count int
	First time.Time
}

// inbox lists the confirmations waiting for an operator, oldest first,
// one card per group of identical retries; a page holds pageSize groups
// and continues after the newest decision of the last one.
func (c *Console) inbox(w http.ResponseWriter, r *http.Request, s *session) {
	if c.cfg.Log == nil {
		c.errorPage(w, r, http.StatusNotFound, "No decision log", "Approvals need a decision log; this server runs without one.")
		return
	}
	d := inboxData{Tomorrow: c.defaultUntil(), Rejected: r.URL.Query().Get("rejected"), CanSign: c.cfg.Signer != nil}
	groups, err := audit.PendingGroups(r.Context(), c.cfg.Log)
	if err != nil {
		d.Err = err.Error()
	}
	groups = groupsAfter(groups, r.URL.Query().Get("after"))
	if len(groups) > pageSize {
		groups = groups[:pageSize]
		d.Next = groups[pageSize-1].Newest.ID
	}
	for _, g := range groups {
		d.Rows = append(d.Rows, inboxRow{Decision: g.Newest, Count: g.Count(), First: g.First})
	}
	c.render(w, r, http.StatusOK, "inbox", signedIn(s, "inbox", "Inbox", d))
}

// groupsAfter is the groups after the one whose newest decision is after
// (all of them when after is "" or names none).
func groupsAfter(groups []audit.PendingGroup, after string) []audit.PendingGroup {
	for i, g := range groups {
		if after != "" && g.Newest.ID == after {
			return groups[i+1:]
		}
	}
	return groups
}

// defaultUntil is the expiry the scope form offers: a day, or the
// maximum lifetime when that is shorter.
func (c *Console) defaultUntil() time.Time {
	return c.cfg.Now().Add(min(24*time.Hour, c.cfg.ApprovalMaxLifetime))
}

// approve records an operator's answer to a pending decision, in the
// signed-in operator's name: approve once, approve within a scope until
// a time, or reject with a note. The identical older retries of the same
// call are closed as superseded by it (audit.AnswerGroup).
func (c *Console) approve(w http.ResponseWriter, r *http.Request, s *session) {
	if !c.answering(w, r) {
		return
	}
	d, status, err := c.loadDecision(r, r.PostFormValue("decision_id"))
	if err != nil {
		c.errorPage(w, r, status, "No such decision", err.Error())
		return
	}
	if !d.Pending {
		c.errorPage(w, r, http.StatusConflict, "Not pending", "Decision "+d.D.ID+" is not a confirmation waiting for an answer (its outcome is "+string(d.D.Outcome)+", with "+itoa(int64(len(d.Approvals)))+" answer(s) on record).")
		return
	}
	a, msg := c.approvalFromForm(r, d.D, c.cfg.Signer.Name+"/"+s.operator)
	if msg != "" {
		c.errorPage(w, r, http.StatusBadRequest, "Approval not recorded", msg)
		return
	}
	if err := c.cfg.Signer.Sign(a, d.D, a.CreatedAt); err != nil {
		c.errorPage(w, r, approveStatus(err), "Approval not recorded", err.Error())
		return
	}
	if _, err := audit.Answer(r.Context(), c.cfg.Log, a, c.sign(a.CreatedAt)); err != nil {
		c.errorPage(w, r, approveStatus(err), "Approval not recorded", err.Error())
		return
	}
	http.Redirect(w, r, consolelink.Decision(BasePath, d.D.ID)+"&done="+urlQuery(a.ID), http.StatusSeeOther)
}

// rejectStale rejects every pending call whose newest retry is older
// than the form's older_than (a duration such as 1h), with its note, in
// the signed-in operator's name (audit.RejectStale).
func (c *Console) rejectStale(w http.ResponseWriter, r *http.Request, s *session) {
	if !c.answering(w, r) {
		return
	}
	age, err := time.ParseDuration(strings.TrimSpace(r.PostFormValue("older_than")))
	if err != nil || age <= 0 {
		c.errorPage(w, r, http.StatusBadRequest, "Nothing rejected", "Older than: want a positive duration such as 30m or 2h.")
		return
	}
	note := strings.TrimSpace(r.PostFormValue("note"))
	if note == "" {
		c.errorPage(w, r, http.StatusBadRequest, "Nothing rejected", "A rejection needs a note saying why: every agent waiting on these calls is told it.")
		return
	}
	now := c.cfg.Now()
	n, err := audit.RejectStale(r.Context(), c.cfg.Log, now.Add(-age), c.cfg.Signer.Name+"/"+s.operator, note, c.sign(now))
	if err != nil {
		c.errorPage(w, r, approveStatus(err), "Rejection not completed", err.Error())
		return
	}
	http.Redirect(w, r, BasePath+"inbox?rejected="+itoa(int64(n)), http.StatusSeeOther)
}

// sign signs the answers a group operation stores in the signed-in
// operator's behalf, with the console's key, at the console's clock now.
func (c *Console) sign(now time.Time) audit.SignFunc {
	return func(a *audit.Approval, d *audit.Decision) error { return c.cfg.Signer.Sign(a, d, now) }
}

// answering says whether this console can answer a decision: it needs
// the decision log and a key to sign with. When it cannot, it has
// answered the request with a page saying why.
func (c *Console) answering(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case c.cfg.Log == nil:
		c.errorPage(w, r, http.StatusNotFound, "No decision log", "Approvals need a decision log.")
		return false
	case c.cfg.Signer == nil:
		c.errorPage(w, r, http.StatusForbidden, "Answering is off", noKey)
		return false
	}
	return true
}

// noKey says why a console without a key offers no answer.
const noKey = "This console has no operator key (ewp-mcp --console-key FILE), and the gate honours only approvals signed by an operator key it trusts, so an answer given here would count for nothing. Answer with `ewp-audit approve` (or reject) and your own key, or restart the server with a console key listed in its --operator-keys file; on a server run as the agent's OS user (stdio) the agent could read that key, so give it only to a server run as another user."

// approvalRow is an approval with the calls that presented it.
type approvalRow struct {
	audit.Approval
	Presented []audit.Decision
}

// maxPresented bounds the calls listed under one approval.
const maxPresented = 20

func (c *Console) trail(r *http.Request, aps []audit.Approval) ([]approvalRow, error) {
	out := make([]approvalRow, len(aps))
	for i, a := range aps {
		out[i].Approval = a
		if c.cfg.Presented == nil {
			continue
		}
		ds, err := c.cfg.Presented(r.Context(), a.ID, maxPresented)
		if err != nil {
			return nil, err
		}
		out[i].Presented = ds
	}
	return out, nil
}

// approveStatus is the HTTP status of a store's refusal of an approval.
func approveStatus(err error) int {
	switch {
	case errors.Is(err, audit.ErrInvalidApproval):
		return http.StatusBadRequest
	case errors.Is(err, audit.ErrAnswered), errors.Is(err, audit.ErrNotPending):
		return http.StatusConflict
	case errors.Is(err, audit.ErrNotFound):
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// approvalFromForm builds the approval, or says what the form lacks.
func (c *Console) approvalFromForm(r *http.Request, d *audit.Decision, operator string) (*audit.Approval, string) {
	now := c.cfg.Now().UTC()
	a := &audit.Approval{ID: audit.NewID(), DecisionID: d.ID, Approver: operator, CreatedAt: now,
		Note: strings.TrimSpace(r.PostFormValue("note"))}
	switch r.PostFormValue("verdict") {
	case "reject":
		a.Verdict = audit.Rejected
		if a.Note == "" {
			return nil, "A rejection needs a note saying why (or what to change)."
		}
		return a, ""
	case "once":
		a.Verdict, a.Once = audit.Approved, true
		return a, ""
	case "scope":
		a.Verdict = audit.Approved
	default:
		return nil, "Choose approve once, approve within a scope, or reject."
	}
	until, err := parseFormTime(r.PostFormValue("until"))
	if err != nil || until.IsZero() {
		return nil, "A scoped approval needs an expiry (until), e.g. 2026-12-02T09:00 (UTC)."
	}
	if !until.After(now) {
		return nil, "The expiry (until) must be in the future."
	}
	a.Until = until
	if err := a.CheckLifetime(now, c.cfg.ApprovalMaxLifetime); err != nil {
		return nil, "The expiry (until) is too far ahead: at most " + c.cfg.ApprovalMaxLifetime.String() + " from now, " +
			now.Add(c.cfg.ApprovalMaxLifetime).Format("2006-01-02T15:04") + " (UTC)."
	}
	sc := &audit.Scope{PropositionID: d.PropositionID}
	if r.PostFormValue("scope_action_kind") == "on" {
		sc.ActionKind = d.ActionKind
	}
	if r.PostFormValue("scope_tool") == "on" {
		sc.ToolName = d.ToolName
	}
	if r.PostFormValue("scope_concepts") == "on" {
		sc.Concepts = d.Concepts
	}
	if sc.ActionKind == "" && sc.ToolName == "" && len(sc.Concepts) == 0 {
		return nil, "Tick at least one of action kind, tool or concepts: a scope of the proposition alone would cover every action on it."
	}
	a.Scope = sc
	return a, ""
}
