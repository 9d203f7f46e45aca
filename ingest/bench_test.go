package ingest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
)

// BenchmarkIngest100k loads 100,000 views (25,000 propositions with four
// snapshots each) from JSON Lines into a new ledger on disk, as
// `ewp-ingest --attest-trusted-origins` does: split, validate on every
// core, store as one transaction. Target: 20,000 views/s on 2 cores.
func BenchmarkIngest100k(b *testing.B) {
	const n = 100_000
	data := snapshottest.SyntheticLines(n, 4)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l, err := ledger.Create(filepath.Join(b.TempDir(), "bench.db"), ledger.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := (&Loader{L: l, Opt: Options{AttestTrustedOrigins: true}}).LoadFile(context.Background(), "bench.jsonl", data)
		if err != nil || rep.Stored != n {
			b.Fatalf("stored %d of %d: %v %v", rep.Stored, n, err, rep.Refused)
		}
		b.StopTimer()
		l.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "views/s")
}
