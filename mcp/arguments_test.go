package mcp

import (
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/gate"
)

// TestDecisionShowsArguments: the record of a may_act the operator must
// answer carries the arguments (redacted) beside their hash, which still
// covers them whole.
func TestDecisionShowsArguments(t *testing.T) {
	ml := memlog.New(nil)
	srv := demoServer(t, WithDecisionLog(DecisionLog{Log: ml}))
	c := dialInProcess(t, srv)
	act := rm("protected/other.txt", "single")
	act["arguments"] = obj{"path": "protected/other.txt", "api_token": "hunter2"}
	out := mustOK(t, call(t, c, "may_act", obj{"proposition_id": "P-verified", "action": guardAct([]any{"delete", "file"}, act)}))
	d, err := ml.Decision(t.Context(), decisionID(t, out))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(d.Arguments); got != `{"api_token":"[redacted]","path":"protected/other.txt"}` || d.ArgumentsTruncated {
		t.Errorf("recorded arguments %s (truncated %v)", got, d.ArgumentsTruncated)
	}
	if d.ArgumentsHash != gate.ArgumentsHash(map[string]any{"path": "protected/other.txt", "api_token": "hunter2"}) {
		t.Error("the hash no longer covers the arguments as sent")
	}
	if text := d.ArgumentsText(); !strings.Contains(text, `"path": "protected/other.txt"`) {
		t.Errorf("ArgumentsText:\n%s", text)
	}
}
