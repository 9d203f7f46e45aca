package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	auditpg "github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/internal/pgtest"
)

// sixtyAMinute is a budgets file holding ops-1 to 60 calls a minute.
const sixtyAMinute = `{"agents":{"ops-1":{"calls_per_minute":60}}}`

// readCall is a may_act the demo ledger's warrant allows: only a budget
// refuses it.
var readCall = map[string]any{"proposition_id": "P-api-cert-valid",
	"action": map[string]any{"action_id": "a", "kind": "read", "risk": "low", "reversible": true}}

// budgetPrefix is how the budget layer's reason for ops-1's 61st call of
// a minute begins (the minute's start follows).
const budgetPrefix = "budget.calls_per_minute: 60 of 60 used by agent ops-1 in the minute from "

// sameMinute waits for the next minute when less than need is left of
// this one: calls_per_minute counts within a minute of the server's
// clock, so calls that straddle two would be counted in two.
func sameMinute(t *testing.T, need time.Duration) {
	t.Helper()
	now := time.Now()
	if left := now.Truncate(time.Minute).Add(time.Minute).Sub(now); left < need {
		t.Logf("waiting %v for a fresh minute", left.Round(time.Millisecond))
		time.Sleep(left + 100*time.Millisecond)
	}
}

// postAs is callAs for goroutines other than the test's: it returns an
// error instead of stopping the test.
func postAs(url, token string, args map[string]any) (toolReply, error) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(callBody(1, "may_act", args)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return toolReply{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return toolReply{}, fmt.Errorf("HTTP %d %s", resp.StatusCode, b)
	}
	_, r, err := parseReply(b)
	return r, err
}

// budgetLayer is the budget layer of a may_act answer: its decision and
// first reason ("" and "" when the answer has none).
func budgetLayer(out map[string]any) (decision, reason string) {
	layers, _ := out["layers"].([]any)
	for _, l := range layers {
		if lo := l.(map[string]any); lo["layer"] == "budget" {
			decision, _ = lo["decision"].(string)
			if rs, _ := lo["reasons"].([]any); len(rs) > 0 {
				reason, _ = rs[0].(string)
			}
		}
	}
	return decision, reason
}

// mayActN makes n calls as token and fails unless every one is MAY_ACT.
func mayActN(t *testing.T, url, token string, n int) {
	t.Helper()
	for i := range n {
		if r := callAs(t, url, token, "may_act", readCall); r.out["decision"] != "MAY_ACT" {
			t.Fatalf("call %d of %d: %+v", i+1, n, r)
		}
	}
}

// wantBudgetDeny checks that ops-1's next call is DENY by its budget and
// returns the decision's id.
func wantBudgetDeny(t *testing.T, url, token string) string {
	t.Helper()
	r := callAs(t, url, token, "may_act", readCall)
	d, why := budgetLayer(r.out)
	if r.out["decision"] != "DENY" || d != "DENY" || !strings.HasPrefix(why, budgetPrefix) {
		t.Fatalf("the 61st call: %v, budget layer %s %q", r.out["decision"], d, why)
	}
	return r.out["decision_id"].(string)
}

// TestSixtyFirstCallDeniedByTheBudget: the real server, its SQLite log
// keeping the counts. ops-1's 60 calls in a minute pass, the 61st is DENY
// with the budget layer's reason and on record as such; dev-1, whom no
// budget names, is not judged by it.
func TestSixtyFirstCallDeniedByTheBudget(t *testing.T) {
	db := demoLedgerFile(t)
	reg, creds := register(t, db, map[string][]string{"ops-1": {"ops"}, "dev-1": {"dev"}})
	p := startMCP(t, "--db", db, "--budgets", writePolicies(t, sixtyAMinute), "--http", "127.0.0.1:0")
	sameMinute(t, 20*time.Second)
	mayActN(t, p.url, creds["ops-1"], 60)
	id := wantBudgetDeny(t, p.url, creds["ops-1"])
	d, err := reg.Decision(context.Background(), id)
	if err != nil || d.Outcome != audit.OutcomeDeny || d.Agent != "ops-1" {
		t.Fatalf("the refusal on record: %+v %v", d, err)
	}
	r := callAs(t, p.url, creds["dev-1"], "may_act", readCall)
	if b, _ := budgetLayer(r.out); r.out["decision"] != "MAY_ACT" || b != "" {
		t.Fatalf("dev-1 has no budget: %v, budget layer %q", r.out["decision"], b)
	}
}

// TestBudgetCountsSurviveARestart: 30 calls in one ewp-mcp process, which
// is then killed; in the next on the same files 30 more pass and the 61st
// of the minute is DENY. A count kept in memory would let 60 through in
// the second process.
func TestBudgetCountsSurviveARestart(t *testing.T) {
	db := demoLedgerFile(t)
	_, creds := register(t, db, map[string][]string{"ops-1": {"ops"}})
	args := []string{"--db", db, "--budgets", writePolicies(t, sixtyAMinute), "--http", "127.0.0.1:0"}
	sameMinute(t, 30*time.Second)
	first := startMCP(t, args...)
	mayActN(t, first.url, creds["ops-1"], 30)
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	second := startMCP(t, args...)
	mayActN(t, second.url, creds["ops-1"], 30)
	wantBudgetDeny(t, second.url, creds["ops-1"])
}

// TestBudgetSharedByReplicasOnPostgres: two ewp-mcp processes (each its
// own pool) recording in one PostgreSQL decision log. 70 calls of ops-1
// at once, spread over both, pass exactly 60; the other 10 are DENY with
// the budget's reason, and so is the next call on either replica.
func TestBudgetSharedByReplicasOnPostgres(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	if err := auditpg.Init(ctx, url, ""); err != nil {
		t.Fatal(err)
	}
	l, err := auditpg.Open(ctx, url, auditpg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cred, sum, err := audit.NewAgentCredential()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AddAgent(ctx, &audit.AgentRecord{Name: "ops-1", Groups: []string{"ops"}, CredentialSHA256: sum}); err != nil {
		t.Fatal(err)
	}
	budgets := writePolicies(t, sixtyAMinute)
	var replicas [2]*mcpProcess
	for i := range replicas {
		replicas[i] = startMCP(t, "--db", demoLedgerFile(t), "--audit", url, "--budgets", budgets, "--http", "127.0.0.1:0")
	}
	sameMinute(t, 30*time.Second)
	var mu sync.Mutex
	outcomes := map[string]int{}
	var errs []error
	var wg sync.WaitGroup
	for w := range 7 {
		wg.Go(func() {
			for n := range 10 {
				r, err := postAs(replicas[(w+n)%2].url, cred, readCall)
				key := fmt.Sprint(r.out["decision"])
				if d, why := budgetLayer(r.out); key == "DENY" && (d != "DENY" || !strings.HasPrefix(why, budgetPrefix)) {
					err = fmt.Errorf("a DENY without the budget's reason: %s %q", d, why)
				}
				mu.Lock()
				outcomes[key]++
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if outcomes["MAY_ACT"] != 60 || outcomes["DENY"] != 10 {
		t.Fatalf("70 calls over two replicas: %v, want 60 MAY_ACT and 10 DENY", outcomes)
	}
	for _, p := range replicas {
		wantBudgetDeny(t, p.url, cred)
	}
	denied, err := l.List(ctx, audit.Filter{Outcome: audit.OutcomeDeny, Limit: 100})
	if err != nil || len(denied) != 12 {
		t.Fatalf("%d DENY decisions on record, want 12: %v", len(denied), err)
	}
}
