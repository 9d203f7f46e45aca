package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/auditchain"
	"github.com/ewp-go/ewp/audit/memlog"
)

// goldenHistory is the sha256 of the answers and the recorded decision
// bodies of the scripted history below, decision ids replaced by their
// order. It was computed on the code before the gate left this package
// (main at 3fa54e0) and must not change: a client and the log see the
// same bytes whatever the package layout.
const goldenHistory = "182b8f0f325dfbcef04affb40f2f8743c63eaf405f361f60b094c6c002712d1a"

// scriptedHistory is a fixed sequence of calls covering every outcome and
// layer: MAY_ACT, REQUIRE_CONFIRMATION, DENY, refusals, the guard layers,
// a concepts-only action, check_grounding, an idempotent replay and an
// unknown approval.
func scriptedHistory() []struct {
	tool string
	args obj
} {
	guarded := func(path string) obj {
		return obj{"proposition_id": "P-verified", "action": guardAct([]any{"delete", "file"}, rm(path, "single"))}
	}
	return []struct {
		tool string
		args obj
	}{
		{"may_act", obj{"proposition_id": "P-verified", "action": action("low", true)}},
		{"may_act", confirmArgs()},
		{"may_act", obj{"proposition_id": "P-tentative", "action": action("high", true)}},
		{"may_act", obj{"proposition_id": "P-verified"}},
		{"may_act", obj{"proposition_id": "P-verified", "action": action("low", true), "view_id": "not-the-latest"}},
		{"may_act", guarded("protected.txt")},
		{"may_act", guarded("/etc/passwd")},
		{"may_act", guarded("/tmp/a")},
		{"may_act", obj{"action": guardAct([]any{"delete", "file"}, rm("/tmp/b", "single"))}},
		{"may_act", obj{"action": guardAct([]any{"frobnicate"}, nil)}},
		{"check_grounding", obj{"concepts": []any{"delete", "file"}}},
		{"check_grounding", obj{"concepts": "delete"}},
		{"may_act", mergeObj(confirmArgs(), obj{"idempotency_key": "k-1"})},
		{"may_act", mergeObj(confirmArgs(), obj{"idempotency_key": "k-1"})},
		{"may_act", mergeObj(confirmArgs(), obj{"approval_id": "0192f000-0000-7000-8000-000000000000"})},
	}
}

// TestScriptedHistoryIsByteForByte runs the scripted history through the
// MCP surface and compares what the client read and what the log holds
// with the digest taken before the gate moved.
func TestScriptedHistoryIsByteForByte(t *testing.T) {
	ml := memlog.New(func() time.Time { return testNow })
	srv := demoServer(t, WithDecisionLog(DecisionLog{Log: ml, PolicySetHash: "abc123", OperatorKeys: alice.Keys}))
	c := dialInProcess(t, srv)
	var answers []string
	for _, step := range scriptedHistory() {
		req := mcpgo.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = step.tool, step.args
		res, err := c.CallTool(context.Background(), req)
		if err != nil || len(res.Content) == 0 {
			t.Fatalf("%s %v: %v", step.tool, step.args, err)
		}
		answers = append(answers, fmt.Sprintf("%v %s", res.IsError, res.Content[0].(mcpgo.TextContent).Text))
	}
	recorded, err := ml.List(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	var bodies []string
	for i := range recorded {
		d := &recorded[i]
		ids[d.ID] = fmt.Sprintf("D-%02d", i)
		d.ID = ids[d.ID]
		b, err := auditchain.MarshalDecision(d)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, string(b))
	}
	all := strings.Join(answers, "\n") + "\n--\n" + strings.Join(bodies, "\n")
	for id, n := range ids {
		all = strings.ReplaceAll(all, id, n)
	}
	sum := sha256.Sum256([]byte(all))
	if got := hex.EncodeToString(sum[:]); got != goldenHistory {
		t.Errorf("the scripted history's answers and records changed: digest %s, want %s\n%s", got, goldenHistory, all)
	}
}
