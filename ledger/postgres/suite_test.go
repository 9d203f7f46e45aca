package postgres_test

import (
	"testing"

	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/ledger/ledgertest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// freshLedger is a new, empty schema in a database shared by the
// package's tests: the suite opens it with Create, which runs Init.
func freshLedger(t *testing.T) string {
	return pgtest.FreshSchema(t)
}

// TestSuite runs the store conformance suite (the one the SQLite ledger
// runs in package ledgertest) against a real PostgreSQL server.
func TestSuite(t *testing.T) {
	ledgertest.Run(t, freshLedger)
}
