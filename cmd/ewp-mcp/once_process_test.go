package main

import (
	"strings"
	"sync"
	"testing"

	"github.com/ewp-go/ewp/fixtures"
)

// 64 concurrent may_act calls over HTTP presenting one single-use
// approval, against the real process and its SQLite decision log: exactly
// one MAY_ACT, the 63 others REQUIRE_CONFIRMATION with APPROVAL_USED, and
// all of them on record.
func TestSingleUseApprovalUnderConcurrencyOnSQLite(t *testing.T) {
	bin := buildAudit(t)
	db := demoLedgerFile(t)
	p := startMCP(t, "--db", db, "--policies", writePolicies(t, string(fixtures.DemoPolicies)), "--http", "127.0.0.1:0", "--operator-keys", keysFile(t))
	protected := deleteOn("P-api-cert-valid", "rm", "protected/report.txt")
	first := p.call("may_act", protected)
	asked, _ := first.out["decision_id"].(string)
	if first.out["decision"] != "REQUIRE_CONFIRMATION" || asked == "" {
		t.Fatalf("want REQUIRE_CONFIRMATION with a decision_id: %+v", first)
	}
	ap := approvalID(t, operator(t, bin, db, "approve", asked, "--once", "--key", opKey(t, "alice"), "--json"))

	const n = 64
	outs := make([]toolReply, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := post(p.url, callBody(i+10, "may_act", with(protected, "approval_id", ap)))
			if err != nil {
				t.Error(err)
				return
			}
			if _, outs[i], err = parseReply(b); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	allowed, used := 0, 0
	for _, r := range outs {
		_, why := approvalLayerOf(r.out)
		switch {
		case r.out["decision"] == "MAY_ACT" && strings.HasPrefix(why, "APPROVED:"):
			allowed++
		case r.out["decision"] == "REQUIRE_CONFIRMATION" && strings.HasPrefix(why, "APPROVAL_USED:"):
			used++
		default:
			t.Errorf("unexpected answer: %+v", r)
		}
	}
	if allowed != 1 || used != n-1 {
		t.Fatalf("%d MAY_ACT and %d APPROVAL_USED of %d calls with one single-use approval", allowed, used, n)
	}
	if lines := strings.Count(operator(t, bin, db, "export"), "\n"); lines != n+1 {
		t.Errorf("%d decisions on record, want %d", lines, n+1)
	}
	operator(t, bin, db, "verify")
}
