package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// TestPagesShowTheAgent: the decisions list, the inbox and the decision
// page name the agent a decision was made for, its text escaped (a bidi
// override made visible), and the decision page says which agent an
// approval answers for.
func TestPagesShowTheAgent(t *testing.T) { eachStore(t, testPagesShowTheAgent) }

func testPagesShowTheAgent(t *testing.T, st backend) {
	e := newEnvOn(t, st)
	d := *e.pending
	d.ID, d.Time = "0192f000-0000-7000-8000-000000000099", clockAt.Add(-time.Minute)
	d.Agent, d.AgentGroups = "builder\u202egpj", []string{"ci"}
	e.record(t, &d)
	c := e.client()
	c.mustSignIn()
	for _, path := range []string{"/console/decisions", "/console/inbox", "/console/decision?id=" + d.ID} {
		code, body := c.get(path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
		if !strings.Contains(body, `builder\u202egpj`) || strings.Contains(body, "\u202e") {
			i := strings.Index(body, "\u202e")
			t.Errorf("GET %s does not show the agent escaped: %q", path, body[max(0, i-300):min(len(body), i+100)])
		}
	}
	if _, body := c.get("/console/decision?id=" + d.ID); !strings.Contains(body, "(groups ci)") {
		t.Error("the decision page lacks the agent's groups")
	}
	a := &audit.Approval{DecisionID: d.ID, Verdict: audit.Approved, Approver: "ops", Once: true}
	if err := e.log.Approve(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, body := c.get("/console/decision?id=" + d.ID); !strings.Contains(body, `for agent builder\u202egpj only`) {
		t.Error("the decision page does not say which agent the approval is for")
	}
}
