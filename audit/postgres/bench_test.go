package postgres_test

import (
	"testing"

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
	audittest.BenchRecord(b, l, callers, audittest.BenchDecision, nil)
}
