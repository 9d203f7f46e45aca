package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// Issue 19 item 3: a scope with no box ticked is refused, and so is an
// until past the maximum lifetime.
func TestScopeFormRefusesEmptyAndFar(t *testing.T) { eachStore(t, testScopeFormRefusesEmptyAndFar) }

func testScopeFormRefusesEmptyAndFar(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	c := e.client()
	csrf := c.mustSignIn()
	scope := func(until time.Time, boxes ...string) (int, string) {
		form := url.Values{"csrf": {csrf}, "decision_id": {e.pending.ID}, "verdict": {"scope"}, "until": {until.Format("2006-01-02T15:04")}}
		for _, b := range boxes {
			form.Set(b, "on")
		}
		code, body, _ := c.do("POST", "/console/approve", form, nil)
		return code, body
	}
	if code, body := scope(clockAt.Add(time.Hour)); code != http.StatusBadRequest || !strings.Contains(body, "Tick at least one") {
		t.Errorf("a scope with no box ticked: %d", code)
	}
	if code, body := scope(time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), "scope_tool"); code != http.StatusBadRequest || !strings.Contains(body, "too far ahead") {
		t.Errorf("until 9999-12-31: %d", code)
	}
	if aps := e.approvals(t, e.pending.ID); len(aps) != 0 {
		t.Fatalf("a refused form recorded %+v", aps)
	}
	if code, _ := scope(clockAt.Add(24*time.Hour), "scope_tool"); code != http.StatusSeeOther {
		t.Errorf("a scope of a tool for a day: %d", code)
	}
}

// Issue 19 item 6: a guard-only decision (no proposition) reads as such,
// and can be approved within a scope of its tool and concepts.
func TestGuardOnlyScope(t *testing.T) { eachStore(t, testGuardOnlyScope) }

func testGuardOnlyScope(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	c := e.client()
	csrf := c.mustSignIn()
	d := *e.pending
	d.ID, d.PropositionID, d.ViewID, d.ViewHash, d.ToolName = audit.NewID(), "", "", "", "rm"
	d.Cardinality, d.MinDepth = "single", new(2)
	if err := e.log.Record(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
	if _, page := c.get("/console/decision?id=" + d.ID); !strings.Contains(page, "cardinality single, min_depth 2") {
		t.Errorf("the decision page does not show the call's cardinality and min_depth, which a once approval binds")
	}
	_, inbox := c.get("/console/inbox")
	if !strings.Contains(inbox, "delete via rm</a> (no proposition: the guard alone judged it)") || strings.Contains(inbox, "via rm</a> on <code></code>") {
		t.Errorf("the guard-only card does not say it judged no proposition")
	}
	if !strings.Contains(inbox, "Bound to calls that name no proposition") {
		t.Errorf("the scope form of a guard-only decision")
	}
	code, body, _ := c.do("POST", "/console/approve", url.Values{"csrf": {csrf}, "decision_id": {d.ID}, "verdict": {"scope"},
		"until": {clockAt.Add(2 * time.Hour).Format("2006-01-02T15:04")}, "scope_tool": {"on"}, "scope_concepts": {"on"}}, nil)
	if code != http.StatusSeeOther {
		t.Fatalf("scope of a guard-only decision: %d\n%s", code, body)
	}
	aps := e.approvals(t, d.ID)
	if len(aps) != 1 || aps[0].Scope == nil || aps[0].Scope.PropositionID != "" || aps[0].Scope.ToolName != "rm" || aps[0].Covers(&d, clockAt) != nil {
		t.Fatalf("approval %+v", aps)
	}
}

// Issue 19 item 7: identical retries are one inbox card with a count;
// answering it closes the older ones; stale ones are rejected together,
// with a note.
func TestInboxGroupsRetries(t *testing.T) { eachStore(t, testInboxGroupsRetries) }

func testInboxGroupsRetries(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	c := e.client()
	csrf := c.mustSignIn()
	ids := []string{e.pending.ID}
	for i := range 3 {
		d := *e.pending
		d.ID, d.Time = audit.NewID(), e.pending.Time.Add(time.Duration(i+1)*time.Second)
		if err := e.log.Record(t.Context(), &d); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	newest := ids[len(ids)-1]
	_, inbox := c.get("/console/inbox")
	if n := strings.Count(inbox, `<article class="pending"`); n != 1 || !strings.Contains(inbox, "asked 4 times") || !strings.Contains(inbox, "approve-once-"+newest) {
		t.Fatalf("inbox: %d cards; want one, asked 4 times, answering %s", n, newest)
	}
	if code, _, _ := c.do("POST", "/console/approve", url.Values{"csrf": {csrf}, "decision_id": {newest}, "verdict": {"once"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("approve once: %d", code)
	}
	for _, id := range ids[:3] {
		aps := e.approvals(t, id)
		if len(aps) != 1 || aps[0].Verdict != audit.Rejected || !strings.Contains(aps[0].Note, "superseded") || !strings.Contains(aps[0].Note, newest) {
			t.Fatalf("older retry %s: %+v; want closed as superseded by %s", id, aps, newest)
		}
	}
	if _, inbox := c.get("/console/inbox"); !strings.Contains(inbox, "Nothing is waiting") {
		t.Fatal("the inbox still lists the answered group")
	}

	stale := *e.pending
	stale.ID, stale.ActionID = audit.NewID(), "act-stale"
	if err := e.log.Record(t.Context(), &stale); err != nil {
		t.Fatal(err)
	}
	form := url.Values{"csrf": {csrf}, "older_than": {"30m"}}
	if code, body, _ := c.do("POST", "/console/reject-stale", form, nil); code != http.StatusBadRequest || !strings.Contains(body, "needs a note") {
		t.Fatalf("reject-all without a note: %d", code)
	}
	form.Set("note", "stale; ask again")
	code, _, hdr := c.do("POST", "/console/reject-stale", form, nil)
	if code != http.StatusSeeOther || !strings.Contains(hdr.Get("Location"), "rejected=1") {
		t.Fatalf("reject-all: %d %s", code, hdr.Get("Location"))
	}
	aps := e.approvals(t, stale.ID)
	if len(aps) != 1 || aps[0].Note != "stale; ask again" || aps[0].Approver != "console/Ada Operator" {
		t.Fatalf("stale decision answered %+v", aps)
	}
}
