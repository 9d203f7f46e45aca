package ledgertest_test

import (
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/ledger/ledgertest"
)

// TestSQLite runs the suite on the SQLite ledger (the PostgreSQL run is in
// package ledger/postgres).
func TestSQLite(t *testing.T) {
	n := 0
	ledgertest.Run(t, func(t *testing.T) string {
		n++
		return filepath.Join(t.TempDir(), "ewp.db")
	})
}
