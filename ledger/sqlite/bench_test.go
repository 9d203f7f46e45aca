package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// syntheticViews decodes n synthetic views (perProp snapshots per
// proposition) on every core.
func syntheticViews(tb testing.TB, first, n, perProp int) []*warrant.View {
	tb.Helper()
	out := make([]*warrant.View, n)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				k := first + i
				v, err := warrant.DecodeView(snapshottest.SyntheticView(k/perProp, k%perProp))
				if err != nil {
					panic(err)
				}
				out[i] = v
			}
		})
	}
	wg.Wait()
	return out
}

// BenchmarkPut100k stores 100,000 decoded views (25,000 propositions, four
// snapshots each) in one batch into a new ledger on disk.
func BenchmarkPut100k(b *testing.B) {
	const n = 100_000
	views := syntheticViews(b, 0, n, 4)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l, err := sqlite.Create(filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if res, err := l.Put(context.Background(), views); err != nil || res.Stored != n {
			b.Fatalf("put: %+v %v", res.Stored, err)
		}
		b.StopTimer()
		l.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "views/s")
}

// BenchmarkLatestEvaluate reads the latest snapshot of a random
// proposition and evaluates it, in ledgers of 1k, 100k and 1M snapshots
// (four per proposition). The ledgers are built once and kept under
// $EWP_BENCH_DIR (default: the system temp dir), because the 1M one takes
// minutes to build.
func BenchmarkLatestEvaluate(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("snapshots=%d", n), func(b *testing.B) {
			l := benchLedger(b, n)
			ctx := context.Background()
			props := n / 4
			r := rand.New(rand.NewPCG(1, 2))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := fmt.Sprintf("P-%07d", r.IntN(props))
				v, err := l.Latest(ctx, id)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := warrant.Evaluate(v, "2026-09-21T12:00:00Z"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchLedger opens (building on first use) a ledger of n synthetic
// snapshots.
func benchLedger(b *testing.B, n int) *sqlite.Ledger {
	b.Helper()
	dir := os.Getenv("EWP_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "ewp-bench")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("latest-%d-v%d.db", n, sqlite.SchemaVersion))
	done := path + ".complete"
	if _, err := os.Stat(done); err != nil {
		os.Remove(path)
		buildLedger(b, path, n)
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	l, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

func buildLedger(b *testing.B, path string, n int) {
	b.Logf("building %s (%d snapshots), once", path, n)
	l, err := sqlite.Create(path, sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	const batch = 50_000
	for first := 0; first < n; first += batch {
		views := syntheticViews(b, first, min(batch, n-first), 4)
		if _, err := l.Put(context.Background(), views); err != nil {
			b.Fatal(err)
		}
	}
}
