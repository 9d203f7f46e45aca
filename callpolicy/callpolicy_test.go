package callpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/gate"
	"github.com/ewp-go/ewp/warrant"
)

const policies = `
@id("no_etc_writes")
forbid (principal, action, resource in Server::"filesystem")
when { context.input has path && context.input.path like "/etc/*" };

@id("interns_confirm_deletes")
@confirm("Interns' deletes need a human.")
forbid (principal in Group::"interns", action, resource)
when { context.kind == "delete" };

@id("no_shell_for_bob")
forbid (principal == Agent::"bob", action == Action::"call", resource == Tool::"shell/run");

@id("irreversible_needs_size")
forbid (principal, action, resource == Tool::"db/drop")
when { !context.reversible && context.input.rows > 100 };
`

func mustLoad(t *testing.T, src string) *Set {
	t.Helper()
	s, err := Load("calls.cedar", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func call(agent audit.Principal, tool, kind string, reversible bool, args string) gate.Input {
	return gate.Input{Agent: agent, Action: warrant.Action{Kind: kind, Risk: "high", Reversible: reversible},
		Call: &gate.ToolCall{Entrance: "gateway", Name: tool, Arguments: json.RawMessage(args)}}
}

var (
	alice = audit.Principal{Name: "alice", Groups: []string{"interns"}}
	bob   = audit.Principal{Name: "bob", Groups: []string{"ops"}}
)

func TestDecisions(t *testing.T) {
	l := NewLayer(mustLoad(t, policies))
	for _, tc := range []struct {
		name  string
		in    gate.Input
		want  audit.Verdict
		fired string // policy ids, comma-separated
	}{
		{"forbid denies with the id", call(bob, "filesystem/write_file", "write", true, `{"path":"/etc/passwd"}`), audit.VerdictDeny, "no_etc_writes"},
		{"other path passes", call(bob, "filesystem/write_file", "write", true, `{"path":"/tmp/x"}`), audit.VerdictMayAct, ""},
		{"other server passes", call(bob, "notes/write", "write", true, `{"path":"/etc/passwd"}`), audit.VerdictMayAct, ""},
		{"no path: has guards it", call(bob, "filesystem/list", "read", true, `{}`), audit.VerdictMayAct, ""},
		{"group member confirms", call(alice, "filesystem/delete", "delete", false, `{"path":"/tmp/x"}`), audit.VerdictRequireConfirmation, "interns_confirm_deletes"},
		{"non-member passes", call(bob, "filesystem/delete", "delete", false, `{"path":"/tmp/x"}`), audit.VerdictMayAct, ""},
		{"hard wins over confirm", call(alice, "filesystem/delete", "delete", false, `{"path":"/etc/x"}`), audit.VerdictDeny, "no_etc_writes,interns_confirm_deletes"},
		{"principal by name", call(bob, "shell/run", "exec", true, `{"cmd":"ls"}`), audit.VerdictDeny, "no_shell_for_bob"},
		{"other agent", call(alice, "shell/run", "exec", true, `{"cmd":"ls"}`), audit.VerdictMayAct, ""},
		{"anonymous", call(audit.Principal{}, "shell/run", "exec", true, `null`), audit.VerdictMayAct, ""},
		{"number and reversible", call(bob, "db/drop", "drop", false, `{"rows":101}`), audit.VerdictDeny, "irreversible_needs_size"},
		{"reversible passes", call(bob, "db/drop", "drop", true, `{"rows":101}`), audit.VerdictMayAct, ""},
		// Fail closed: the policy reads rows, which the call lacks.
		{"missing member fires", call(bob, "db/drop", "drop", false, `{}`), audit.VerdictDeny, "irreversible_needs_size"},
	} {
		d, err := l.Decide(context.Background(), tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var ids []string
		for _, f := range d.Detail.(Detail).Fired {
			ids = append(ids, f.PolicyID)
		}
		if d.Decision != tc.want || strings.Join(ids, ",") != tc.fired {
			t.Errorf("%s: %s fired %v (%q), want %s fired %q", tc.name, d.Decision, ids, d.Reasons, tc.want, tc.fired)
		}
		if tc.fired != "" && !strings.Contains(d.Reasons[0], `"`+ids[0]+`"`) {
			t.Errorf("%s: reason %q does not name the policy", tc.name, d.Reasons[0])
		}
	}
}

func TestReasonNamesPolicyToolAndAgent(t *testing.T) {
	d, err := NewLayer(mustLoad(t, policies)).Decide(context.Background(), call(bob, "shell/run", "exec", true, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `call policy "no_shell_for_bob" forbids shell/run for agent bob`
	if len(d.Reasons) != 1 || d.Reasons[0] != want {
		t.Errorf("reasons %q, want [%q]", d.Reasons, want)
	}
}

func TestNoCallIsNotApplicable(t *testing.T) {
	_, err := NewLayer(mustLoad(t, policies)).Decide(context.Background(), gate.Input{Agent: bob})
	if !errors.Is(err, gate.ErrNotApplicable) {
		t.Fatalf("err %v, want ErrNotApplicable", err)
	}
}

// Arguments past a bound, or not an object, are never given to Cedar:
// every policy fires, even one whose scope does not name the tool.
func TestInputBoundsFireEveryPolicy(t *testing.T) {
	deep := strings.Repeat(`{"a":`, MaxInputDepth) + "1" + strings.Repeat("}", MaxInputDepth)
	wide := "[" + strings.Repeat("1,", MaxInputValues) + "1]"
	big := `{"p":"` + strings.Repeat("x", MaxInputBytes) + `"}`
	okDeep := strings.Repeat(`{"a":`, MaxInputDepth-1) + "1" + strings.Repeat("}", MaxInputDepth-1)
	l := NewLayer(mustLoad(t, policies))
	for _, tc := range []struct{ name, args, problem string }{
		{"deep", deep, "nest deeper than 32"},
		{"many values", `{"a":` + wide + `}`, "values, over the limit of 10000"},
		{"large", big, "over the limit of 262144"},
		{"array", `[1]`, "a JSON array, not an object"},
		{"not JSON", `{`, "not JSON"},
	} {
		d, err := l.Decide(context.Background(), call(alice, "notes/read", "read", true, tc.args))
		if err != nil {
			t.Fatal(err)
		}
		fired := d.Detail.(Detail).Fired
		if d.Decision != audit.VerdictDeny || len(fired) != 4 || !strings.Contains(fired[0].Reason, tc.problem) {
			t.Errorf("%s: %s %+v, want DENY with every policy fired for %q", tc.name, d.Decision, fired, tc.problem)
		}
	}
	if d, _ := l.Decide(context.Background(), call(alice, "notes/read", "read", true, okDeep)); d.Decision != audit.VerdictMayAct {
		t.Errorf("arguments at the depth bound: %s %v", d.Decision, d.Reasons)
	}
}

func TestLoadErrorsNameTheRule(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`@id("p") permit (principal, action, resource);`, "only forbid policies are allowed"},
		{`forbid (principal, action, resource);`, "@id: missing required annotation"},
		{`@id("") forbid (principal, action, resource);`, "@id: must not be empty"},
		{`@id("p") forbid (principal, action, resource); @id("p") forbid (principal, action, resource);`, "@id: duplicate id, first used at x.cedar:1:1"},
		{`@id("p") @confirm(" ") forbid (principal, action, resource);`, "@confirm: needs the message"},
		{`@id("p") @confirms("x") forbid (principal, action, resource);`, "@confirms: unknown annotation"},
		{`@id("p") forbid (principal, action, resource`, "x.cedar"},
	} {
		_, err := Load("x.cedar", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestLoadBounds(t *testing.T) {
	if _, err := Load("big.cedar", make([]byte, MaxFileBytes+1)); err == nil || !strings.Contains(err.Error(), "over the limit of 1048576") {
		t.Errorf("large file: %v", err)
	}
	var b strings.Builder
	for i := range MaxPolicies + 1 {
		fmt.Fprintf(&b, "@id(\"p%d\") forbid (principal, action, resource);\n", i)
	}
	if _, err := Load("many.cedar", []byte(b.String())); err == nil || !strings.Contains(err.Error(), "1001 policies, over the limit of 1000") {
		t.Errorf("many policies: %v", err)
	}
}
