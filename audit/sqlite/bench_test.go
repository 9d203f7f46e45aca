package sqlite_test

import (
	"path/filepath"
	"testing"

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
	audittest.BenchRecord(b, l, callers, decision, processCPU)
}
