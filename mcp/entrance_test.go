package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/warrant"
)

// lastRecord is the newest decision in ml and its recorded size (its JSON,
// as the stores keep it).
func lastRecord(t *testing.T, ml *memlog.Log) (audit.Decision, int) {
	t.Helper()
	ds, err := ml.List(context.Background(), audit.Filter{})
	if err != nil || len(ds) == 0 {
		t.Fatalf("no decision recorded: %v", err)
	}
	d := ds[len(ds)-1]
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return d, len(b)
}

// TestOverlongIDsRefusedAtTheEntrance: every id and name a may_act call
// brings into the decision log is refused past its bound, by name and
// bound, and the refusal's record holds none of it (ten 1 MB approval_ids
// once grew the log by 51 MB).
func TestOverlongIDsRefusedAtTheEntrance(t *testing.T) {
	srv, ml, _ := loggedServer(t)
	c := dialInProcess(t, srv)
	huge := strings.Repeat("A", 1<<20-1024)
	over := strings.Repeat("é", MaxIDBytes/2) + "x" // MaxIDBytes+1 bytes, fewer characters
	withAction := func(k string, v any) obj {
		a := action(warrant.RiskMedium, true)
		a[k] = v
		return obj{"proposition_id": "P-tentative", "action": a}
	}
	idMax := warrant.DefaultLimits.MaxStringBytes
	cases := []struct {
		field string
		args  obj
		bound int
	}{
		{"approval_id", mergeObj(confirmArgs(), obj{"approval_id": huge}), MaxIDBytes},
		{"approval_id", mergeObj(confirmArgs(), obj{"approval_id": over}), MaxIDBytes},
		{"idempotency_key", mergeObj(confirmArgs(), obj{"idempotency_key": huge}), MaxIDBytes},
		{"evaluated_at", mergeObj(confirmArgs(), obj{"evaluated_at": huge}), MaxIDBytes},
		{"action.action_id", withAction("action_id", huge), MaxIDBytes},
		{"action.kind", withAction("kind", over), MaxIDBytes},
		{"action.risk", withAction("risk", huge), MaxIDBytes},
		{"action.tool_name", withAction("tool_name", huge), MaxIDBytes},
		{"action.concepts[1]", withAction("concepts", []any{"delete", huge}), MaxIDBytes},
		{"proposition_id", obj{"proposition_id": huge, "action": action(warrant.RiskMedium, true)}, idMax},
		{"view_id", mergeObj(confirmArgs(), obj{"view_id": huge}), idMax},
	}
	for _, tc := range cases {
		o := call(t, c, "may_act", tc.args)
		msg := mustRefuse(t, o, warrant.CodeLimitExceeded)
		if !strings.Contains(msg, tc.field) || !strings.Contains(msg, fmt.Sprintf("at most %d bytes", tc.bound)) || strings.Contains(msg, "--max-") {
			t.Errorf("%s: message %q", tc.field, msg)
		}
		d, size := lastRecord(t, ml)
		if d.ID != o.decisionID || d.Code != warrant.CodeLimitExceeded || size > 2048 {
			t.Errorf("%s: the refusal's record is %d bytes (want at most 2 KiB): %+v", tc.field, size, d)
		}
	}
	// At the bound, each is taken.
	at := strings.Repeat("k", MaxIDBytes)
	o := call(t, c, "may_act", mergeObj(withAction("action_id", at), obj{"idempotency_key": at}))
	if o.code != "" {
		t.Errorf("ids at the bound refused: %s %s", o.code, o.msg)
	}
	// More concepts than the bound.
	many := make([]any, MaxConcepts+1)
	for i := range many {
		many[i] = fmt.Sprint("c", i)
	}
	msg := mustRefuse(t, call(t, c, "may_act", withAction("concepts", many)), warrant.CodeLimitExceeded)
	if !strings.Contains(msg, "action.concepts") || !strings.Contains(msg, fmt.Sprint("at most ", MaxConcepts)) {
		t.Errorf("concepts: %s", msg)
	}
}

// TestRecordedMessageIsBounded: a refusal message quoting what it was
// given (here an unknown argument's 500 kB name) is recorded cut to
// MaxRecordedMessageBytes; the caller still gets it whole.
func TestRecordedMessageIsBounded(t *testing.T) {
	srv, ml, _ := loggedServer(t)
	c := dialInProcess(t, srv)
	name := strings.Repeat("z", 500_000)
	o := call(t, c, "may_act", mergeObj(confirmArgs(), obj{name: 1}))
	mustRefuse(t, o, CodeInvalidArgument)
	d, size := lastRecord(t, ml)
	if len(d.Message) > MaxRecordedMessageBytes || !strings.Contains(d.Message, "bytes cut)") || size > 4096 {
		t.Errorf("recorded message %d bytes, record %d bytes: %.200s", len(d.Message), size, d.Message)
	}
	if len(o.msg) < 500_000 {
		t.Errorf("the caller's message was cut too (%d bytes)", len(o.msg))
	}
}

// TestCheckGroundingEntrance: check_grounding is recorded, so its
// concepts are bounded too.
func TestCheckGroundingEntrance(t *testing.T) {
	ml := memlog.New(nil)
	srv := demoServer(t, WithDecisionLog(DecisionLog{Log: ml}))
	c := dialInProcess(t, srv)
	msg := mustRefuse(t, call(t, c, "check_grounding", obj{"concepts": []any{"delete", strings.Repeat("f", MaxIDBytes+1)}}), warrant.CodeLimitExceeded)
	if !strings.Contains(msg, "concepts[1]") {
		t.Errorf("message: %s", msg)
	}
	if _, size := lastRecord(t, ml); size > 2048 {
		t.Errorf("refusal record %d bytes", size)
	}
}

// TestInitializeClientInfoBounded: the client's name and version, which
// every decision of the session records, are bounded at initialize.
func TestInitializeClientInfoBounded(t *testing.T) {
	srv, _ := newTestServer(t)
	for _, info := range []string{
		`{"name":"` + strings.Repeat("n", MaxIDBytes+1) + `","version":"1"}`,
		`{"name":"c","version":"` + strings.Repeat("9", 100_000) + `"}`,
	} {
		msg := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":` + info + `}}`
		var reply rpcReply
		if err := json.Unmarshal(srv.handleMessage(context.Background(), []byte(msg)), &reply); err != nil || reply.Error == nil {
			t.Fatalf("initialize with an over-long clientInfo answered %+v (%v)", reply, err)
		}
		if reply.Error.Code != -32602 || !strings.Contains(reply.Error.Message, "params.clientInfo.") || !strings.Contains(reply.Error.Message, fmt.Sprint("at most ", MaxIDBytes)) {
			t.Errorf("error: %+v", reply.Error)
		}
	}
	ok := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + strings.Repeat("n", MaxIDBytes) + `","version":"1"}}}`
	var reply rpcReply
	if err := json.Unmarshal(srv.handleMessage(context.Background(), []byte(ok)), &reply); err != nil || reply.Error != nil {
		t.Errorf("a name at the bound: %+v %v", reply.Error, err)
	}
}

// TestOneCallAddsABoundedRecord: a may_act call with every id and name
// at its bound, all of it characters JSON escapes six bytes each, 64
// unknown concepts (so the grounding layer reports a gap per concept) and
// arguments far over their recorded bound, adds one record within
// MaxRecordBytes.
func TestOneCallAddsABoundedRecord(t *testing.T) {
	ml := memlog.New(nil)
	srv := demoServer(t, WithDecisionLog(DecisionLog{Log: ml}))
	c := dialInProcess(t, srv)
	fill := func(i int) string { return fmt.Sprintf("%03d", i) + strings.Repeat("\x01", MaxIDBytes-3) }
	concepts := make([]any, MaxConcepts)
	for i := range concepts {
		concepts[i] = fill(i)
	}
	act := guardAct(concepts, obj{"action_id": fill(1), "kind": fill(2), "tool_name": fill(3),
		"arguments": obj{"script": strings.Repeat("\x01", 200_000)}}) // recorded cut to MaxRecordedArgumentsBytes
	for _, args := range []obj{
		{"proposition_id": "P-verified", "action": act, "approval_id": fill(4), "idempotency_key": fill(5)},
		{"proposition_id": "P-verified", "action": act, "approval_id": fill(4)},
		{"proposition_id": strings.Repeat("\x02", warrant.DefaultLimits.MaxStringBytes), "action": act, "approval_id": fill(4)},
	} {
		o := call(t, c, "may_act", args)
		_, size := lastRecord(t, ml)
		t.Logf("record of %d bytes (%s)", size, o.code)
		if size > MaxRecordBytes {
			t.Errorf("one call added a record of %d bytes, over %d", size, MaxRecordBytes)
		}
	}
}
