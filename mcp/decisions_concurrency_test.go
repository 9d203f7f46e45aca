package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/warrant"
)

// postTool calls a tool with one plain HTTP POST, as a stateless client
// does, and returns the structured result (nil on a refusal).
func postTool(t testing.TB, url, tool string, arguments obj) obj {
	body := mustJSONText(t, obj{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": obj{"name": tool, "arguments": arguments}})
	req, err := http.NewRequest(http.MethodPost, url+EndpointPath, bytes.NewReader(body))
	if err != nil {
		t.Error(err)
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer res.Body.Close()
	var msg struct {
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent obj  `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.NewDecoder(res.Body).Decode(&msg); err != nil || msg.Result.IsError {
		t.Errorf("%s: %v (isError %v)", tool, err, msg.Result.IsError)
		return nil
	}
	return msg.Result.StructuredContent
}

// 64 concurrent may_act calls presenting one single-use approval: exactly
// one MAY_ACT, every other one REQUIRE_CONFIRMATION with APPROVAL_USED,
// and all 64 on record.
func TestSingleUseApprovalUnderConcurrency(t *testing.T) {
	srv, ml, _ := loggedServer(t)
	ts := httpTestServer(t, srv)
	asked := decisionID(t, postTool(t, ts.URL, "may_act", confirmArgs()))
	ap := approve(t, ml, audit.Approval{DecisionID: asked, Once: true})
	const n = 64
	outs := make([]obj, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = postTool(t, ts.URL, "may_act", mergeObj(confirmArgs(), obj{"approval_id": ap}))
		}()
	}
	wg.Wait()
	allowed, used := 0, 0
	for _, out := range outs {
		if out == nil {
			t.FailNow()
		}
		_, why, _ := approvalOf(t, out)
		switch {
		case out["decision"] == string(warrant.MayActDecision):
			allowed++
		case out["decision"] == string(warrant.RequireConfirmation) && strings.HasPrefix(why, ReasonApprovalUsed+":"):
			used++
		}
	}
	if allowed != 1 || used != n-1 {
		t.Fatalf("%d MAY_ACT and %d APPROVAL_USED of %d calls with one single-use approval", allowed, used, n)
	}
	withIt, _ := ml.List(context.Background(), audit.Filter{})
	if len(withIt) != n+1 {
		t.Errorf("%d decisions on record, want %d", len(withIt), n+1)
	}
}

// Concurrent retries with one idempotency key: one decision on record,
// every caller gets it.
func TestIdempotencyKeyUnderConcurrency(t *testing.T) {
	srv, ml, _ := loggedServer(t)
	ts := httpTestServer(t, srv)
	const n = 16
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out := postTool(t, ts.URL, "may_act", mergeObj(confirmArgs(), obj{"idempotency_key": "same"})); out != nil {
				ids[i], _ = out["decision_id"].(string)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" || id != ids[0] {
			t.Fatalf("decision ids %v", ids)
		}
	}
	if all, _ := ml.List(context.Background(), audit.Filter{}); len(all) != 1 {
		t.Errorf("%d decisions on record for one key", len(all))
	}
}

// Concurrent retries with one idempotency key presenting one single-use
// approval: the approval is spent once, on the decision every caller
// receives.
func TestIdempotentApprovalUnderConcurrency(t *testing.T) {
	ml := memlog.New(nil)
	// A store slow to commit what an approval lifted: the retries that
	// found the approval used must not bind the key first.
	srv, _ := newTestServer(t, WithDecisionLog(testLog(slowLifts{ml})))
	ts := httpTestServer(t, srv)
	asked := decisionID(t, postTool(t, ts.URL, "may_act", confirmArgs()))
	ap := approve(t, ml, audit.Approval{DecisionID: asked, Once: true})
	const n = 16
	outs := make([]obj, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = postTool(t, ts.URL, "may_act", mergeObj(confirmArgs(), obj{"approval_id": ap, "idempotency_key": "deploy-7"}))
		}()
	}
	wg.Wait()
	by, used := ml.UsedBy(ap)
	for _, out := range outs {
		if out == nil || out["decision"] != string(warrant.MayActDecision) || out["decision_id"] != by || !used {
			t.Fatalf("answer %v; approval used by %q", out, by)
		}
	}
}

// slowLifts is a log that takes its time recording MAY_ACT decisions.
type slowLifts struct{ *memlog.Log }

func (l slowLifts) Record(ctx context.Context, d *audit.Decision) error {
	if d.Outcome == audit.OutcomeMayAct {
		time.Sleep(50 * time.Millisecond)
	}
	return l.Log.Record(ctx, d)
}

func (l slowLifts) RecordUse(ctx context.Context, d *audit.Decision) error {
	time.Sleep(50 * time.Millisecond)
	return l.Log.RecordUse(ctx, d)
}
