package audittest

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
)

// BenchRecord is both stores' Record benchmark: callers concurrent
// callers (SetParallelism over GOMAXPROCS; a single caller runs alone on
// one processor, a commit per record) record decision(i) into l, each
// waiting for its commit as the server does. It reports records/s,
// records per commit and, when cpu is not nil (the process's CPU time so
// far), the CPU per record: on a machine shared with other work a fairer
// cost than wall time.
func BenchRecord(b *testing.B, l Log, callers int, decision func(int) *audit.Decision, cpu func() (time.Duration, bool)) {
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism(max(1, (callers+procs-1)/procs))
	if callers == 1 {
		b.SetParallelism(1)
		runtime.GOMAXPROCS(1)
		defer runtime.GOMAXPROCS(procs)
	}
	b.ReportAllocs()
	var cpu0 time.Duration
	okCPU := false
	if cpu != nil {
		cpu0, okCPU = cpu()
	}
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if err := l.Record(context.Background(), decision(i)); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
	if commits, writes := l.CommitStats(); commits > 0 {
		b.ReportMetric(float64(writes)/float64(commits), "records/commit")
	}
	if okCPU {
		if cpu1, ok := cpu(); ok {
			b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
		}
	}
}
