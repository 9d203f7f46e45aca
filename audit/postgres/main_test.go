package postgres_test

import (
	"testing"

	"github.com/ewp-go/ewp/internal/pgtest"
)

// TestMain runs the tests on a throwaway cluster (pgtest), or this binary
// as a replica for TestKillKeepsEveryReturnedRecord (recording) or
// TestConsumeRaceAcrossProcesses (consuming).
func TestMain(m *testing.M) {
	if recorderChild() || consumerChild() {
		return
	}
	pgtest.Main(m)
}
