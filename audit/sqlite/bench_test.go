package sqlite_test

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/sqlite"
)

// benchDecision is a may_act decision of the size the gate records: every
// layer with its reasons, the caller, the policy set.
func benchDecision(i int) *audit.Decision {
	d := pendingDecision("P-bench", i)
	d.Caller.RemoteAddr = "127.0.0.1:53211"
	d.Caller.ClientVersion = "1.0.0"
	d.Layers = []audit.Layer{
		{Layer: "evidence", Decision: "MAY_ACT", Reasons: []string{"ACCEPTED, EXTERNAL verification, 2 lineages"}},
		{Layer: "policy", Decision: "REQUIRE_CONFIRMATION", Reasons: []string{"prod-writes: irreversible action in production"}},
		{Layer: "grounding", Decision: "MAY_ACT", Reasons: []string{"database: justified at D2"}},
	}
	d.RiskPolicy = map[string]any{"low": "MAY_ACT", "medium": "MAY_ACT", "high": "REQUIRE_CONFIRMATION"}
	return d
}

// BenchmarkRecordParallel records decisions from 64 concurrent callers
// (SetParallelism over GOMAXPROCS), each waiting for its commit as the
// server does. It reports records/s and the process CPU per record.
func BenchmarkRecordParallel(b *testing.B) {
	for _, sync := range []struct {
		name string
		full bool
	}{{"normal", false}, {"full", true}} {
		b.Run(sync.name, func(b *testing.B) { benchRecord(b, 64, sync.full) })
	}
}

// BenchmarkRecordSerial is one caller: a commit per record.
func BenchmarkRecordSerial(b *testing.B) { benchRecord(b, 1, false) }

func benchRecord(b *testing.B, callers int, full bool) {
	l, err := sqlite.Create(filepath.Join(b.TempDir(), "bench.audit"), sqlite.Options{SyncFull: full})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism(max(1, (callers+procs-1)/procs))
	if callers == 1 {
		b.SetParallelism(1)
		runtime.GOMAXPROCS(1)
		defer runtime.GOMAXPROCS(procs)
	}
	b.ReportAllocs()
	cpu0, okCPU := processCPU()
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if err := l.Record(ctx, benchDecision(i)); err != nil {
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
	if cpu1, ok := processCPU(); ok && okCPU {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}
