package store_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
)

// benchStores gives each benchmark a fresh ledger of each store.
var benchStores = []struct {
	name  string
	fresh func(tb testing.TB) string
}{
	{"sqlite", func(tb testing.TB) string { return filepath.Join(tb.TempDir(), "bench.db") }},
	{"postgres", func(tb testing.TB) string { return pgLedger(tb) }},
}

// BenchmarkIngest stores the same synthetic views (4 snapshots each of
// 500 propositions per batch, as a loader's batches) into each store, in
// one run: views/s is the comparison.
func BenchmarkIngest(b *testing.B) {
	const batch = 2000
	for _, s := range benchStores {
		b.Run(s.name, func(b *testing.B) {
			ctx := context.Background()
			l, err := store.Open(ctx, s.fresh(b), store.Options{Create: true})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			b.ResetTimer()
			start := time.Now()
			cpu := startCPU(b, s.name)
			for i := 0; i < b.N; i++ {
				base := i * batch / 4
				_, err := l.PutEach(ctx, batch, func(j int) (*warrant.View, error) {
					return warrant.DecodeView(snapshottest.SyntheticView(base+j/4, j%4))
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "views/s")
			cpu.report(b, b.N*batch, "view")
		})
	}
}

// BenchmarkLatest reads the latest snapshot of a random proposition from a
// ledger holding 1k or 100k snapshots (two per proposition), and 1M with
// EWP_BENCH_1M=1 (slow to fill).
func BenchmarkLatest(b *testing.B) {
	parent := b // runs once: ledgers made on it outlive the sub-benchmarks' rounds
	sizes := []int{1_000, 100_000}
	if os.Getenv("EWP_BENCH_1M") != "" {
		sizes = append(sizes, 1_000_000)
	}
	for _, s := range benchStores {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%dk", s.name, n/1000), func(b *testing.B) {
				benchLatest(b, filled(parent, s.name, s.fresh, n), s.name, n, false)
			})
			b.Run(fmt.Sprintf("%s/%dk/parallel", s.name, n/1000), func(b *testing.B) {
				benchLatest(b, filled(parent, s.name, s.fresh, n), s.name, n, true)
			})
		}
	}
}

// benchLatest reads random propositions' latest snapshots, one call at a
// time or from 16 goroutines (a replica's concurrent requests; calls/s is
// then the throughput on this machine's cores, shared with the database).
func benchLatest(b *testing.B, dsn, name string, n int, parallel bool) {
	ctx := context.Background()
	l, err := store.Open(ctx, dsn, store.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	props := n / 2
	read := func() {
		if _, err := l.Latest(ctx, fmt.Sprintf("P-%07d", rand.IntN(props))); err != nil {
			b.Error(err)
		}
	}
	b.ResetTimer()
	cpu := startCPU(b, name)
	start := time.Now()
	if parallel {
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				read()
			}
		})
	} else {
		for i := 0; i < b.N; i++ {
			read()
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
	cpu.report(b, b.N, "op")
}

var (
	fillMu sync.Mutex
	fills  = map[string]string{}
)

// filled is a ledger of n snapshots, made once per store and size for the
// whole benchmark run.
func filled(b *testing.B, name string, fresh func(testing.TB) string, n int) string {
	fillMu.Lock()
	defer fillMu.Unlock()
	key := fmt.Sprint(name, n)
	if dsn, ok := fills[key]; ok {
		return dsn
	}
	dsn := fresh(b)
	ctx := context.Background()
	l, err := store.Open(ctx, dsn, store.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	start := time.Now()
	for done := 0; done < n; done += 50_000 {
		m := min(50_000, n-done)
		_, err := l.PutEach(ctx, m, func(j int) (*warrant.View, error) {
			k := done + j
			return warrant.DecodeView(snapshottest.SyntheticView(k/2, k%2))
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%s: filled %d snapshots in %v", name, n, time.Since(start).Round(time.Millisecond))
	fills[key] = dsn
	return dsn
}

// cpuMeter charges a run's processor time per item: this process's
// (decoding, hashing, the driver) and, for PostgreSQL, the throwaway
// server's (pgtest.Cluster.CPUTime), so the cost of a call is known
// whatever else shares the machine's cores.
type cpuMeter struct {
	self, db time.Duration
	dbOK     bool
	store    string
}

func startCPU(b *testing.B, store string) *cpuMeter {
	m := &cpuMeter{store: store}
	if store == "postgres" {
		m.db, m.dbOK = pgtest.Get(b).CPUTime()
	}
	m.self = selfCPU() // after the /proc scan, which is not the store's
	return m
}

func (m *cpuMeter) report(b *testing.B, n int, unit string) {
	b.ReportMetric(float64((selfCPU()-m.self).Microseconds())/float64(n), "client-cpu-µs/"+unit)
	if m.dbOK {
		db, _ := pgtest.Get(b).CPUTime()
		b.ReportMetric(float64((db-m.db).Microseconds())/float64(n), "db-cpu-µs/"+unit)
	}
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAppend appends one evidence item per call to one of 100
// propositions: the small write agents' tools make, each its own
// transaction (and, on PostgreSQL, its own turn on the chain lock).
func BenchmarkAppend(b *testing.B) {
	for _, s := range benchStores {
		b.Run(s.name, func(b *testing.B) {
			ctx := context.Background()
			l, err := store.Open(ctx, s.fresh(b), store.Options{Create: true})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			if _, err := l.PutEach(ctx, 100, func(j int) (*warrant.View, error) {
				return warrant.DecodeView(snapshottest.SyntheticView(j, 0))
			}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu := startCPU(b, s.name)
			start := time.Now()
			for i := 0; i < b.N; i++ {
				e := warrant.Evidence{EvidenceID: fmt.Sprintf("e-bench-%d", i), Polarity: warrant.Supports, Content: "c",
					ObservedAt: "2026-09-20T00:00:00Z", Source: warrant.SourceRef{ContentHash: "h", ObservedAt: "2026-09-20T00:00:00Z"}}
				if _, err := l.AppendEvidence(ctx, fmt.Sprintf("P-%07d", i%100), e); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
			cpu.report(b, b.N, "op")
		})
	}
}

// streamItem is a synthetic view as the streaming ingest hands it over.
type streamItem struct{ i int }

func (s streamItem) View() (*warrant.View, error) {
	return warrant.DecodeView(snapshottest.SyntheticView(s.i/4, s.i%4))
}
func (s streamItem) Size() int { return 2048 }

// BenchmarkIngestStream is BenchmarkIngest through PutStream, the path
// ewp-ingest takes for every input.
func BenchmarkIngestStream(b *testing.B) {
	const batch = 2000
	for _, s := range benchStores {
		b.Run(s.name, func(b *testing.B) {
			ctx := context.Background()
			l, err := store.Open(ctx, s.fresh(b), store.Options{Create: true})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			b.ResetTimer()
			cpu := startCPU(b, s.name)
			start := time.Now()
			for i := 0; i < b.N; i++ {
				next := i * batch
				end := next + batch
				_, err := l.PutStream(ctx, ledger.Stream{Next: func() (ledger.StreamItem, error) {
					if next == end {
						return nil, io.EOF
					}
					next++
					return streamItem{next - 1}, nil
				}})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "views/s")
			cpu.report(b, b.N*batch, "view")
		})
	}
}
