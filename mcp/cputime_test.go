package mcp

import (
	"testing"

	auditsqlite "github.com/ewp-go/ewp/audit/sqlite"
)

// reportCPU starts counting the process's CPU; the function it returns
// reports it per op as cpu-ns/op. On a shared machine that is a fairer
// cost per call than ns/op: whatever else runs on the cores stretches the
// wall time, not the CPU this process spends (client side included: the
// in-process benchmarks' client is httptest, the same for every pair).
func reportCPU(b *testing.B) func() {
	cpu0, ok0 := processCPU()
	return func() {
		if cpu1, ok1 := processCPU(); ok0 && ok1 && b.N > 0 {
			b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
		}
	}
}

// reportCommits reports how many decisions shared each commit of l: the
// commit is the store's largest fixed cost, so its share of a call's CPU
// depends on how many calls are queued when the writer begins one.
func reportCommits(b *testing.B, l *auditsqlite.Log) {
	if commits, writes := l.CommitStats(); commits > 0 {
		b.ReportMetric(float64(writes)/float64(commits), "records/commit")
	}
}
