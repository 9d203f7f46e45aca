package manifest

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/warrant"
)

func TestRequestCarriesWhatTheManifestSays(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	c := describe(t, m, "filesystem/write_file", `{"path": "ln/new.txt", "content": "hello", "mode": 420}`)
	p := audit.Principal{Name: "agent-7", Groups: []string{"builders"}}
	r := c.Request(p, EntranceGateway)

	wantAct := warrant.Action{ActionID: "filesystem/write_file", Kind: "write", Risk: "medium", Reversible: false}
	if r.Action != wantAct {
		t.Errorf("action %+v, want %+v", r.Action, wantAct)
	}
	if err := warrant.ValidateAction(r.Action); err != nil {
		t.Errorf("the action does not validate: %v", err)
	}
	if r.PropositionID != "file:"+dir+"/data/protected/new.txt" || len(r.Propositions) != 0 {
		t.Errorf("proposition %q, further %v", r.PropositionID, r.Propositions)
	}
	if !reflect.DeepEqual(r.Agent, p) || r.RiskPolicy != warrant.DefaultRiskPolicy() || r.Ingest {
		t.Errorf("agent %+v, policy %+v, ingest %v", r.Agent, r.RiskPolicy, r.Ingest)
	}
	tc := r.Call
	if tc == nil || tc.Entrance != "gateway" || tc.Name != "filesystem/write_file" || tc.Rule != "filesystem/write_file" || tc.ConfirmBy != "operator" {
		t.Fatalf("call %+v", tc)
	}
	if string(tc.Arguments) != `{"content":"hello","mode":420,"path":"ln/new.txt"}` ||
		string(tc.Recorded) != `{"content":"[redacted]","mode":420,"path":"ln/new.txt"}` {
		t.Errorf("arguments %s, recorded %s", tc.Arguments, tc.Recorded)
	}
	// The guard's share, as may_act builds it from action.concepts & co.
	if r.Guard == nil {
		t.Fatal("no guard fields for a call with concepts")
	}
	g := r.Guard.Act
	if !slices.Equal(g.Concepts, []string{"file", "protected_file"}) || g.Cardinality != "single" ||
		g.MinDepth == nil || *g.MinDepth != 1 || g.ToolName != "filesystem/write_file" {
		t.Errorf("guard %+v", g)
	}
	if n, ok := g.Arguments["mode"].(json.Number); !ok || n != "420" {
		t.Errorf("guard arguments keep numbers exact (json.Number): %#v", g.Arguments["mode"])
	}
	want := map[string]string{
		"action_id": `"filesystem/write_file"`, "kind": `"write"`, "risk": `"medium"`, "reversible": "false",
		"concepts": `["file","protected_file"]`, "tool_name": `"filesystem/write_file"`, "cardinality": `"single"`,
		"min_depth": "1", "arguments": `{"content":"hello","mode":420,"path":"ln/new.txt"}`,
	}
	if len(r.ActionFields) != len(want) {
		t.Errorf("action fields %v", r.ActionFields)
	}
	for k, v := range want {
		if string(r.ActionFields[k]) != v {
			t.Errorf("action.%s = %s, want %s", k, r.ActionFields[k], v)
		}
	}
}

func TestRequestWithoutConceptsHasNoGuard(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	c := describe(t, m, "filesystem/move_file", map[string]any{"source": "notes.txt", "destination": "sub/x"})
	r := c.Request(audit.Principal{}, EntranceClaudeCode)
	if r.Guard != nil {
		t.Errorf("guard %+v for a call with no concepts", r.Guard.Act)
	}
	if _, has := r.ActionFields["concepts"]; has || len(r.ActionFields) != 4 {
		t.Errorf("action fields %v", r.ActionFields)
	}
	if r.PropositionID != "file:"+dir+"/data/notes.txt" || !slices.Equal(r.Propositions, []string{"file:" + dir + "/data/sub/x"}) {
		t.Errorf("propositions %q %v", r.PropositionID, r.Propositions)
	}
	if r.Call.Entrance != "claude-code" {
		t.Errorf("entrance %q", r.Call.Entrance)
	}
}

// A Call built by hand (not by Describe) still gives the guard its
// arguments, decoded from Arguments.
func TestRequestFromAHandMadeCall(t *testing.T) {
	c := &Call{Name: "s/t", Rule: "s/*", Kind: "k", Risk: "high", Concepts: []string{"c"},
		Arguments: json.RawMessage(`{"n": 1.0}`), ConfirmBy: ConfirmUser}
	r := c.Request(audit.Principal{Name: "a"}, EntranceOpenClaw)
	if n, ok := r.Guard.Act.Arguments["n"].(json.Number); !ok || n != "1.0" {
		t.Errorf("arguments %#v", r.Guard.Act.Arguments)
	}
	if r.PropositionID != "" || r.Propositions != nil || r.Call.ConfirmBy != "user" {
		t.Errorf("request %+v", r)
	}
}

func TestDenyCallRequestIsNeverLight(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	for _, name := range []string{"filesystem/delete_file", "nobody/tool"} {
		c := describe(t, m, name, nil)
		r := c.Request(audit.Principal{}, EntranceGateway)
		if !c.Deny || r.Action.Risk != warrant.RiskHigh || r.Action.Reversible {
			t.Errorf("%s: deny %v, action %+v", name, c.Deny, r.Action)
		}
	}
}

func TestDenied(t *testing.T) {
	dir := tree(t)
	m := fsManifest(t, dir, "")
	e := describe(t, m, "filesystem/delete_file", nil).Denied()
	if e == nil || e.Code != CodeDeniedByManifest || e.Field != "/name" || e.Rule != "filesystem/delete_*" {
		t.Errorf("deny rule: %v", e)
	}
	e = describe(t, m, "nobody/tool", nil).Denied()
	if e == nil || e.Rule != DefaultRule || !strings.Contains(e.Reason, "default is deny") {
		t.Errorf("default deny: %v", e)
	}
	if e := describe(t, m, "filesystem/read_file", map[string]any{"path": "notes.txt"}).Denied(); e != nil {
		t.Errorf("a permitted call is denied: %v", e)
	}
}
