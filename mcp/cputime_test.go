package mcp

import "testing"

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
