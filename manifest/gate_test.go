package manifest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

// noLedger stores nothing: every proposition is missing.
type noLedger struct{}

func (noLedger) Latest(context.Context, string) (*warrant.View, error) {
	return nil, &warrant.Error{Code: warrant.CodeMissingView, Field: "proposition_id", Rule: "no snapshot is stored"}
}

// What the manifest builds is what the gate judges and records: the
// evidence layer holds a high-risk call that names no proposition, lets
// a low-risk reversible one through, and the record holds the tool's
// name, the hash of the canonical arguments and the redacted arguments.
func TestRequestsThroughTheGate(t *testing.T) {
	m, err := Parse([]byte(`{"tools": [
	  {"match": "claude-code/Bash", "kind": "exec", "risk": "high", "reversible": false, "redact": ["/env/TOKEN"]},
	  {"match": "claude-code/Glob", "kind": "read", "risk": "low", "reversible": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	log := memlog.New(nil)
	g, err := gate.New(gate.Config{Ledger: noLedger{}, Log: log, Now: func() time.Time { return time.Unix(1_800_000_000, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	agent := audit.Principal{Name: "ci-bot"}

	bash := describe(t, m, "claude-code/Bash", `{"command": "make deploy", "env": {"TOKEN": "s3cret"}}`)
	ans, err := g.Decide(ctx, bash.Request(agent, EntranceClaudeCode))
	if err != nil {
		t.Fatal(err)
	}
	if ans.Decision != warrant.RequireConfirmation {
		t.Errorf("a high-risk call with no proposition: %s (%+v)", ans.Decision, ans.Layers)
	}
	d, err := log.Decision(ctx, ans.DecisionID)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bash.Arguments)
	if d.ToolName != "claude-code/Bash" || d.ArgumentsHash != hex.EncodeToString(sum[:]) {
		t.Errorf("recorded tool %q, hash %q", d.ToolName, d.ArgumentsHash)
	}
	if string(d.Arguments) != `{"command":"make deploy","env":{"TOKEN":"[redacted]"}}` {
		t.Errorf("recorded arguments %s", d.Arguments)
	}

	glob := describe(t, m, "claude-code/Glob", `{"pattern": "*.go"}`)
	ans, err = g.Decide(ctx, glob.Request(agent, EntranceClaudeCode))
	if err != nil {
		t.Fatal(err)
	}
	if ans.Decision != warrant.MayActDecision {
		t.Errorf("a low-risk reversible call: %s (%+v)", ans.Decision, ans.Layers)
	}
}
