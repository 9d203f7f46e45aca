package postgres_test

import (
	"testing"

	"github.com/ewp-go/ewp/internal/pgtest"
)

// TestMain runs the tests on a throwaway cluster (pgtest), or this binary
// as a recording replica for TestKillKeepsEveryReturnedRecord.
func TestMain(m *testing.M) {
	if recorderChild() {
		return
	}
	pgtest.Main(m)
}
