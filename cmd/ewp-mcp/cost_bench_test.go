package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/fixtures"
)

// BenchmarkMayActProcess is the cost of decisions on record as issue #12
// states it: may_act calls/s of the real ewp-mcp process over HTTP at 64
// concurrent clients, with --audit off and with the SQLite decision log
// beside the ledger (the default). Each sub-benchmark starts its own
// server; client and server share the machine, as on one host. Compare
// the two ns/op (calls/s = 1e9 / ns/op) from one run; on a busy machine
// run -count 3 or more, which alternates them:
//
//	go test ./cmd/ewp-mcp -run '^$' -bench MayActProcess -benchtime 5s -count 3
func BenchmarkMayActProcess(b *testing.B) {
	policies := writePolicies(b, string(fixtures.DemoPolicies))
	calls := []struct {
		name string
		body []byte
		want string
	}{
		// The cheapest may_act: the warrant alone judges an action without
		// concepts, so the log's share of the cost is at its largest.
		{"warrant", []byte(callBody(1, "may_act", map[string]any{"proposition_id": "P-api-cert-valid",
			"action": map[string]any{"action_id": "a", "kind": "deploy", "risk": "high", "reversible": false}})), "MAY_ACT"},
		// A protected delete on accepted evidence: every layer runs
		// (warrant, grounding, edge policies) and the answer is
		// REQUIRE_CONFIRMATION, the decision an operator is asked about.
		{"guarded", []byte(callBody(1, "may_act", deleteOn("P-api-cert-valid", "rm", "protected/report.txt"))), "REQUIRE_CONFIRMATION"},
	}
	for _, c := range calls {
		for _, log := range []struct{ name, audit string }{{"audit-off", "off"}, {"sqlite", ""}} {
			b.Run(c.name+"/"+log.name, func(b *testing.B) { benchProcess(b, policies, log.audit, c.body, c.want) })
		}
	}
}

// benchProcess drives one ewp-mcp process with 64 concurrent clients
// sending body, each answer checked for decision want.
func benchProcess(b *testing.B, policies, auditFlag string, body []byte, want string) {
	args := []string{"--db", demoLedgerFile(b), "--policies", policies, "--http", "127.0.0.1:0"}
	if auditFlag != "" {
		args = append(args, "--audit", auditFlag)
	}
	p := startMCP(b, args...)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	cpu0, cpuOK := processCPU(p.cmd.Process.Pid)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := hc.Post(p.url, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"decision":"`+want+`"`)) {
				b.Errorf("HTTP %d: %s", resp.StatusCode, out)
				return
			}
		}
	})
	b.StopTimer()
	if cpu1, ok := processCPU(p.cmd.Process.Pid); ok && cpuOK {
		b.ReportMetric((cpu1-cpu0).Seconds()*1e6/float64(b.N), "server-cpu-us/call")
	}
}

// processCPU is the user and system CPU time process pid has used, from
// /proc/PID/stat (Linux); ok false elsewhere.
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces; fields count from after
	// its closing parenthesis: utime and stime are fields 14 and 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	const ticks = 100 // USER_HZ, fixed at 100 on Linux
	return time.Duration(utime+stime) * time.Second / ticks, true
}
