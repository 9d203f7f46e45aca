package console_test

import (
	"strings"
	"testing"

	"github.com/ewp-go/ewp/console"
	"github.com/ewp-go/ewp/console/consolelink"
)

// The link the hooks and the gateway print for a pending decision is a
// page the console answers: the decision's, with its approval form. An
// id that is not on record is the console's 404, not another page.
func TestConsoleLinkIsAnsweredByTheConsole(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.mustSignIn()
	link := consolelink.Decision(e.srv.URL+console.BasePath, e.pending.ID)
	path, ok := strings.CutPrefix(link, e.srv.URL)
	if !ok {
		t.Fatalf("link %q is not under the console's server %s", link, e.srv.URL)
	}
	code, page := c.get(path)
	if code != 200 || !strings.Contains(page, "Decision "+e.pending.ID) || !strings.Contains(page, "Approve once") {
		t.Fatalf("GET %s: %d, want the decision's page:\n%.2000s", link, code, page)
	}
	if code, _ := c.get(strings.TrimPrefix(consolelink.Decision(e.srv.URL+"/console", "no-such-decision"), e.srv.URL)); code != 404 {
		t.Errorf("a decision not on record: %d, want 404", code)
	}
}
