package console_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/console"
)

func TestPagesRender(t *testing.T) { eachStore(t, testPagesRender) }

func testPagesRender(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	c := e.client()
	c.mustSignIn()
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/console/", []string{"Propositions by state", "conflict OPEN", "STALE", "DEGRADED", "SUPERSEDED", "UNACCEPTED", "as of", "Pending confirmations", "REQUIRE_CONFIRMATION", "Verify the ledger"}},
		{"/console/propositions", []string{"P-api-cert-valid", "ACCEPTED"}},
		{"/console/propositions?state=stale", []string{"STALE"}},
		{"/console/propositions?q=certificate", []string{"P-api-cert-valid"}},
		{"/console/proposition?id=P-api-cert-valid", []string{"Warrant over time", "<svg", "openssl-2026-11-20", "Snapshot history", "L-openssl"}},
		{"/console/decisions", []string{"MAY_ACT", "DENY", "REQUIRE_CONFIRMATION"}},
		{"/console/decisions?outcome=DENY", []string{"DENY"}},
		{"/console/decision?id=" + e.pending.ID, []string{"Layers", "protected_file", "delete APPLIES_TO file at D3 (filesystem-demo.cedar:11:1)", "Approve once", "Approval trail"}},
		{"/console/inbox", []string{"Approve once", "Approve within scope", "Reject", "Ada Operator"}},
		{"/console/graph", []string{"<svg", "delete", "file", "protected_file", "bulk_delete"}},
		{"/console/graph?q=delete,file", []string{"GROUNDED", "Grounding trace"}},
		{"/console/graph?q=delete,unicorn", []string{"EXISTENCE", "unicorn"}},
	} {
		code, body := c.get(tc.path)
		if code != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", tc.path, code, body)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: page lacks %q", tc.path, w)
			}
		}
	}
	if code, _ := c.get("/console/static/console.css"); code != http.StatusOK {
		t.Errorf("stylesheet: %d", code)
	}
}

// The state filter shows only propositions in that state.
func TestPropositionsFilterByState(t *testing.T) { eachStore(t, testPropositionsFilterByState) }

func testPropositionsFilterByState(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	c := e.client()
	c.mustSignIn()
	_, all := c.get("/console/propositions")
	_, open := c.get("/console/propositions?state=open")
	if strings.Count(open, "/console/proposition?id=") >= strings.Count(all, "/console/proposition?id=") {
		t.Fatalf("state=open lists as many propositions as no filter")
	}
	if strings.Count(open, "b-open") == 0 {
		t.Fatalf("state=open lists no proposition with an OPEN conflict")
	}
}

func TestInboxApproveOnce(t *testing.T) { eachStore(t, testInboxApproveOnce) }

func testInboxApproveOnce(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	c := e.client()
	csrf := c.mustSignIn()
	code, _, hdr := c.do("POST", "/console/approve", url.Values{"csrf": {csrf}, "decision_id": {e.pending.ID}, "verdict": {"once"}}, nil)
	if code != http.StatusSeeOther {
		t.Fatalf("approve once: %d", code)
	}
	aps := e.approvals(t, e.pending.ID)
	if len(aps) != 1 {
		t.Fatalf("%d approvals recorded, want 1", len(aps))
	}
	a := aps[0]
	if a.Approver != "console/Ada Operator" || !a.Once || a.Verdict != audit.Approved || !a.CreatedAt.Equal(clockAt) || a.Covers(e.pending, clockAt) != nil {
		t.Fatalf("approval %+v: want approved once by Ada Operator at the server clock, covering the decision", a)
	}
	if name, err := consoleKey.Keys.Verify(&a); err != nil || name != "console" {
		t.Fatalf("the console's approval does not verify against its key: %q %v", name, err)
	}
	if !strings.Contains(hdr.Get("Location"), a.ID) {
		t.Errorf("redirect %q does not name the approval", hdr.Get("Location"))
	}
	_, page := c.get("/console/decision?id=" + e.pending.ID)
	if !strings.Contains(page, a.ID) || !strings.Contains(page, "Ada Operator") || strings.Contains(page, "Approve once") {
		t.Errorf("decision page after approval: want the approval in its trail and no more forms")
	}
	// A second answer to the same decision is refused.
	if code, _, _ := c.do("POST", "/console/approve", url.Values{"csrf": {csrf}, "decision_id": {e.pending.ID}, "verdict": {"once"}}, nil); code != http.StatusConflict {
		t.Errorf("second answer: %d, want 409", code)
	}
	if _, inbox := c.get("/console/inbox"); !strings.Contains(inbox, "Nothing is waiting") {
		t.Errorf("the inbox still lists the answered decision")
	}
}

// TestNoConsoleKeyNoAnswers: a console without an operator key offers no
// answer forms, says why, and refuses a posted answer without storing
// anything: an unsigned approval would count for nothing at the gate.
func TestNoConsoleKeyNoAnswers(t *testing.T) {
	e := newEnv(t, func(c *console.Config) { c.Signer = nil })
	c := e.client()
	csrf := c.mustSignIn()
	for _, path := range []string{"/console/inbox", "/console/decision?id=" + e.pending.ID} {
		_, page := c.get(path)
		if strings.Contains(page, "Approve once") || !strings.Contains(page, "--console-key") {
			t.Errorf("%s: want no answer forms and the reason (--console-key)", path)
		}
	}
	code, body, _ := c.do("POST", "/console/approve", url.Values{"csrf": {csrf}, "decision_id": {e.pending.ID}, "verdict": {"once"}}, nil)
	if code != http.StatusForbidden || !strings.Contains(body, "--console-key") {
		t.Fatalf("approve without a console key: %d", code)
	}
	if aps := e.approvals(t, e.pending.ID); len(aps) != 0 {
		t.Fatalf("an answer was stored without a console key: %+v", aps)
	}
}

func TestInboxApproveScopeAndReject(t *testing.T) { eachStore(t, testInboxApproveScopeAndReject) }

func testInboxApproveScopeAndReject(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	c := e.client()
	csrf := c.mustSignIn()
	until := clockAt.Add(2 * time.Hour).Format("2006-01-02T15:04")
	// A scope without an expiry is refused, with the reason.
	code, body, _ := c.do("POST", "/console/approve", url.Values{"csrf": {csrf}, "decision_id": {e.pending.ID}, "verdict": {"scope"}}, nil)
	if code != http.StatusBadRequest || !strings.Contains(body, "expiry") {
		t.Fatalf("scope without until: %d", code)
	}
	code, _, _ = c.do("POST", "/console/approve", url.Values{"csrf": {csrf}, "decision_id": {e.pending.ID}, "verdict": {"scope"},
		"until": {until}, "scope_action_kind": {"on"}, "scope_tool": {"on"}, "note": {"for the migration"}}, nil)
	if code != http.StatusSeeOther {
		t.Fatalf("approve scope: %d", code)
	}
	aps := e.approvals(t, e.pending.ID)
	if len(aps) != 1 {
		t.Fatalf("%d approvals", len(aps))
	}
	a := aps[0]
	if a.Once || a.Scope == nil || a.Scope.PropositionID != "P-api-cert-valid" || a.Scope.ActionKind != "delete" || a.Scope.ToolName != "fs_delete" ||
		len(a.Scope.Concepts) != 0 || !a.Until.Equal(clockAt.Add(2*time.Hour)) || a.Note != "for the migration" || a.Covers(e.pending, clockAt) != nil {
		t.Fatalf("scoped approval %+v (scope %+v)", a, a.Scope)
	}

	// Reject needs a note; with one it is recorded as a rejection.
	d := *e.pending
	d.ID = "0192f000-0000-7000-8000-000000000099"
	e.record(t, &d)
	if code, _, _ := c.do("POST", "/console/approve", url.Values{"csrf": {csrf}, "decision_id": {d.ID}, "verdict": {"reject"}}, nil); code != http.StatusBadRequest {
		t.Fatalf("reject without note: %d, want 400", code)
	}
	if code, _, _ := c.do("POST", "/console/approve", url.Values{"csrf": {csrf}, "decision_id": {d.ID}, "verdict": {"reject"}, "note": {"use the trash instead"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("reject: %d", code)
	}
	aps = e.approvals(t, d.ID)
	if len(aps) != 1 || aps[0].Verdict != audit.Rejected || aps[0].Note != "use the trash instead" || aps[0].Approver != "console/Ada Operator" || aps[0].Covers(&d, clockAt) == nil {
		t.Fatalf("rejection %+v", aps)
	}
}

func TestVerifyOnDemandRemembered(t *testing.T) { eachStore(t, testVerifyOnDemandRemembered) }

func testVerifyOnDemandRemembered(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	c := e.client()
	csrf := c.mustSignIn()
	for _, target := range []string{"ledger", "log"} {
		if code, _, _ := c.do("POST", "/console/verify", url.Values{"csrf": {csrf}, "target": {target}}, nil); code != http.StatusSeeOther {
			t.Fatalf("verify %s: %d", target, code)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, page := c.get("/console/")
		if strings.Count(page, "intact") >= 2 && strings.Contains(page, "snapshots") && strings.Contains(page, "3 decisions, 0 approvals") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("verify results never shown:\n%s", page)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A proposition with two snapshots: the chart marks the exact instant the
// first turned STALE (its check + five days), and the default comparison
// shows the check the second added.
func TestPropositionChartAndDiff(t *testing.T) { eachStore(t, testPropositionChartAndDiff) }

func testPropositionChartAndDiff(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	c := e.client()
	c.mustSignIn()
	code, page := c.get("/console/proposition?id=P-restic-snapshots")
	if code != http.StatusOK {
		t.Fatalf("%d", code)
	}
	for _, want := range []string{
		"STALE after 2026-11-26 08:00:00Z", // the red rule's label, in the SVG
		`<tr class="diff-added"><td>added</td><td>check</td><td><code>k-restic-2</code>`,
		"Difference from <code>restic-1</code> to <code>restic-2</code>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("proposition page lacks %q", want)
		}
	}
	// Comparing a snapshot with itself shows no difference.
	_, page = c.get("/console/proposition?id=P-restic-snapshots&a=restic-1&b=restic-1")
	if !strings.Contains(page, "No difference.") {
		t.Errorf("a snapshot compared with itself shows differences")
	}
}

// Links carry ids with URL-special characters intact (html/template
// escapes query values itself; escaping them first would double-escape).
func TestLinksKeepSpecialIDs(t *testing.T) { eachStore(t, testLinksKeepSpecialIDs) }

func testLinksKeepSpecialIDs(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	d := *e.pending
	d.ID, d.PropositionID = "0192f000-0000-7000-8000-000000000077", "P a/b+c&d%"
	d.Outcome = audit.OutcomeDeny
	e.record(t, &d)
	c := e.client()
	c.mustSignIn()
	_, feed := c.get("/console/decisions?outcome=DENY")
	m := regexp.MustCompile(`href="(/console/proposition\?id=[^"]*)"`).FindAllStringSubmatch(feed, -1)
	var link string
	for _, x := range m {
		if strings.Contains(x[1], "P%20a") {
			link = html.UnescapeString(x[1])
		}
	}
	if link == "" {
		t.Fatalf("no link to the proposition in the feed:\n%s", feed)
	}
	_, page := c.get(link)
	if !strings.Contains(html.UnescapeString(page), strconv.Quote("P a/b+c&d%")) {
		t.Fatalf("following %s did not ask for proposition %q:\n%s", link, "P a/b+c&d%", page)
	}
}

// With a newest-first lister the feed opens on the latest decision and
// pages back to the first.
func TestDecisionsFeedNewestFirst(t *testing.T) { eachStore(t, testDecisionsFeedNewestFirst) }

func testDecisionsFeedNewestFirst(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	for i := 10; i < 70; i++ {
		d := *e.pending
		d.ID = fmt.Sprintf("0192f000-0000-7000-8000-%012d", i)
		d.Time = clockAt.Add(time.Duration(i) * time.Second)
		d.Outcome = audit.OutcomeMayAct
		if err := e.log.Record(t.Context(), &d); err != nil {
			t.Fatal(err)
		}
	}
	c := e.client()
	c.mustSignIn()
	idRE := regexp.MustCompile(`decision\?id=(0192f000-0000-7000-8000-0000000000\d\d)`)
	ids := func(page string) []string {
		var out []string
		for _, m := range idRE.FindAllStringSubmatch(page, -1) {
			out = append(out, m[1])
		}
		return out
	}
	_, first := c.get("/console/decisions")
	got := ids(first)
	if len(got) != 50 || !strings.HasSuffix(got[0], "69") || !strings.HasSuffix(got[49], "20") {
		t.Fatalf("first page: %d rows from %v to %v, want 50 from …69 down to …20", len(got), got[0], got[len(got)-1])
	}
	older := regexp.MustCompile(`href="([^"]*)">Older</a>`).FindStringSubmatch(first)
	if older == nil {
		t.Fatal("no link to older decisions")
	}
	_, second := c.get(html.UnescapeString(older[1]))
	got = ids(second)
	if len(got) != 13 || !strings.HasSuffix(got[0], "19") || !strings.HasSuffix(got[12], "01") {
		t.Fatalf("older page: %v, want …19 to …10 then the three seeded", got)
	}
}

// The approval trail lists the calls that presented the approval.
func TestApprovalTrailShowsPresentedCalls(t *testing.T) {
	eachStore(t, testApprovalTrailShowsPresentedCalls)
}

func testApprovalTrailShowsPresentedCalls(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	c := e.client()
	csrf := c.mustSignIn()
	if code, _, _ := c.do("POST", "/console/approve", url.Values{"csrf": {csrf}, "decision_id": {e.pending.ID}, "verdict": {"once"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("approve: %d", code)
	}
	aps := e.approvals(t, e.pending.ID)
	use := *e.pending
	use.ID, use.Time, use.Outcome, use.ApprovalID = "0192f000-0000-7000-8000-000000000555", clockAt, audit.OutcomeMayAct, aps[0].ID
	if err := e.log.Record(t.Context(), &use); err != nil {
		t.Fatal(err)
	}
	_, page := c.get("/console/decision?id=" + e.pending.ID)
	if !strings.Contains(page, "Presented by:") || !strings.Contains(page, "decision?id="+use.ID) {
		t.Fatalf("the approval trail does not list the call that presented the approval")
	}
}

// TestPageNumbersNeverPanic: any ?page= value is a page, the ones past the
// end empty: (page-1)*pageSize once overflowed into a negative slice
// bound and the handler panicked.
func TestPageNumbersNeverPanic(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.mustSignIn()
	for _, page := range []string{"9223372036854775807", "9223372036854775808", "184467440737095516", "-9223372036854775808", "42949673", "0", "x"} {
		for _, path := range []string{"/console/propositions?page=", "/console/propositions?q=certificate&page=", "/console/propositions?state=stale&page="} {
			code, body := c.get(path + url.QueryEscape(page))
			if code != http.StatusOK || !strings.Contains(body, "Propositions") {
				t.Errorf("GET %s%s: %d\n%s", path, page, code, body)
			}
		}
	}
}

// TestApprovalScreensShowArguments: the inbox card and the decision page
// show the action's arguments, not only their hash, escaped: markup as
// text, a bidi override made visible.
func TestApprovalScreensShowArguments(t *testing.T) { eachStore(t, testApprovalScreensShowArguments) }

func testApprovalScreensShowArguments(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	c := e.client()
	c.mustSignIn()
	for _, path := range []string{"/console/inbox", "/console/decision?id=" + e.pending.ID} {
		code, body := c.get(path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
		for _, want := range []string{"Arguments", `&#34;path&#34;: &#34;protected/other.txt&#34;`, `&lt;script&gt;alert(1)&lt;/script&gt;`, `\u202etxt.exe`} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s lacks %q", path, want)
			}
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "\u202e") {
			t.Errorf("GET %s shows the arguments unescaped", path)
		}
	}
}

// A proposition page lists the decisions made on it, newest first, each
// linking to its decision page; its rationale is in words with the code
// kept as the tooltip, and its freshness policy in days.
func TestPropositionListsItsDecisions(t *testing.T) { eachStore(t, testPropositionListsItsDecisions) }

func testPropositionListsItsDecisions(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	c := e.client()
	c.mustSignIn()
	code, page := c.get("/console/proposition?id=P-api-cert-valid")
	if code != http.StatusOK {
		t.Fatalf("%d", code)
	}
	var at []int
	for i := 3; i >= 1; i-- {
		link := fmt.Sprintf(`href="/console/decision?id=0192f000-0000-7000-8000-%012d"`, i)
		at = append(at, strings.Index(page, link))
	}
	if at[0] < 0 || at[1] < at[0] || at[2] < at[1] {
		t.Errorf("decisions on the proposition not listed newest first with links (positions %v)", at)
	}
	for _, want := range []string{"Decisions on this proposition", `href="/console/decisions?prop=P-api-cert-valid"`,
		`<span title="verification.external">checked by an external source</span>`, "Fresh for "} {
		if !strings.Contains(page, want) {
			t.Errorf("proposition page lacks %q", want)
		}
	}
	for _, raw := range []string{"Rationale: ", "Freshness policy "} {
		if strings.Contains(page, raw) {
			t.Errorf("proposition page still shows %q raw", raw)
		}
	}
	// A proposition no decision was made on says so.
	_, page = c.get("/console/proposition?id=P-restic-snapshots")
	if !strings.Contains(page, "No decision was made on it yet.") {
		t.Error("a proposition without decisions does not say so")
	}
}

// Counts read right in the singular: "1 stretch", not "1 stretches".
func TestPagesCountInEnglish(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.mustSignIn()
	_, page := c.get("/console/proposition?id=P-api-cert-valid")
	if m := regexp.MustCompile(`\((\d+) (stretch|stretches)\)`).FindStringSubmatch(page); m == nil ||
		(m[1] == "1") != (m[2] == "stretch") {
		t.Errorf("stretch count: %q", m)
	}
	_, page = c.get("/console/graph")
	if !strings.Contains(page, "10 concepts") || !regexp.MustCompile(`\(\d+ relations\)`).MatchString(page) {
		t.Error("graph page counts wrong")
	}
	_, page = c.get("/console/")
	if !strings.Contains(page, "3 decisions in the log") {
		t.Error("overview counts wrong")
	}
}
