package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

var titleRE = regexp.MustCompile(`<title>([^<]*)</title>`)

func titleOf(t *testing.T, page string) string {
	t.Helper()
	m := titleRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no <title> in %.200q", page)
	}
	return m[1]
}

// TestTitleCountsPending: every signed-in page's title starts with the
// number of decisions waiting for an operator, so a tab left open says
// how many wait; it follows answers, and the sign-in page shows none.
func TestTitleCountsPending(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	if _, login := c.get("/console/login"); strings.HasPrefix(titleOf(t, login), "(") {
		t.Errorf("sign-in page title %q", titleOf(t, login))
	}
	csrf := c.mustSignIn()
	for _, path := range []string{"/console/", "/console/inbox", "/console/decisions"} {
		if _, page := c.get(path); titleOf(t, page)[:4] != "(1) " {
			t.Errorf("%s: title %q, want it to start with (1)", path, titleOf(t, page))
		}
	}
	for i := range 2 {
		d := *e.pending
		d.ID, d.ActionID, d.Time = audit.NewID(), "act-more-"+string(rune('a'+i)), e.pending.Time.Add(time.Duration(i+1)*time.Second)
		if err := e.log.Record(t.Context(), &d); err != nil {
			t.Fatal(err)
		}
	}
	if _, page := c.get("/console/inbox"); titleOf(t, page)[:4] != "(3) " {
		t.Errorf("after two more: title %q", titleOf(t, page))
	}
	if code, _, _ := c.do("POST", "/console/approve", url.Values{"csrf": {csrf}, "decision_id": {e.pending.ID}, "verdict": {"once"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("approve once: %d", code)
	}
	if _, page := c.get("/console/inbox"); titleOf(t, page)[:4] != "(2) " {
		t.Errorf("after an answer: title %q", titleOf(t, page))
	}
}
