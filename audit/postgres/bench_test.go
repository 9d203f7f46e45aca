package postgres_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/postgres"
)

// BenchmarkRecordParallel records decisions from 64 concurrent callers,
// each waiting for its commit, as audit/sqlite's benchmark of the same
// name. The throwaway cluster runs with fsync off: the numbers are the
// log's and the round trips' cost, not a disk's.
func BenchmarkRecordParallel(b *testing.B) { benchRecord(b, 64) }

// BenchmarkRecordSerial is one caller: a transaction per record.
func BenchmarkRecordSerial(b *testing.B) { benchRecord(b, 1) }

func benchRecord(b *testing.B, callers int) {
	l, err := postgres.Open(ctx, newDB(b), postgres.Options{})
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
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if err := l.Record(ctx, audittest.BenchDecision(i)); err != nil {
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
}
