package sqlite_test

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/sqlite"
)

// BenchmarkRecordParallel records decisions from 64 concurrent callers
// (SetParallelism over GOMAXPROCS), each waiting for its commit as the
// server does. It reports records/s and the process CPU per record.
// "normal" and "full" record MAY_ACT decisions (synchronous=NORMAL,
// FULL), which need no decisions row; "pending" records
// REQUIRE_CONFIRMATION ones, each with its row.
func BenchmarkRecordParallel(b *testing.B) {
	b.Run("normal", func(b *testing.B) { benchRecord(b, 64, false, audittest.BenchAllowed) })
	b.Run("pending", func(b *testing.B) { benchRecord(b, 64, false, audittest.BenchDecision) })
	b.Run("full", func(b *testing.B) { benchRecord(b, 64, true, audittest.BenchAllowed) })
}

// BenchmarkRecordSerial is one caller: a commit per record.
func BenchmarkRecordSerial(b *testing.B) { benchRecord(b, 1, false, audittest.BenchAllowed) }

func benchRecord(b *testing.B, callers int, full bool, decision func(int) *audit.Decision) {
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
			if err := l.Record(ctx, decision(i)); err != nil {
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
