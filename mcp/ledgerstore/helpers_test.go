package ledgerstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/store"
)

// The helpers are exported so the external test package (ledgerstore_test)
// shares them; they exist only in the test binary.

func TestMain(m *testing.M) { pgtest.Main(m) }

// Stores are the two ledger stores a test runs on, as subtests.
var Stores = []string{"sqlite", "postgres"}

// EachStore runs fn as subtests /sqlite and /postgres: the same test on
// both ledgers (issue #13). Without a PostgreSQL server the /postgres
// subtest skips loudly, or fails under CI (see internal/pgtest).
func EachStore(t *testing.T, fn func(t *testing.T, kind string)) {
	for _, k := range Stores {
		t.Run(k, func(t *testing.T) { fn(t, k) })
	}
}

// FreshDSN is where a new, empty ledger of kind goes: a file in a
// temporary directory, or a new schema in a database shared by the
// package's tests. Open it with store.Options{Create: true}.
func FreshDSN(t testing.TB, kind string) string {
	t.Helper()
	if kind == "postgres" {
		return pgtest.FreshSchema(t)
	}
	return filepath.Join(t.TempDir(), "l.db")
}

// FreshLedger opens a new, empty ledger of kind, closed when t ends, and
// returns it with its DSN.
func FreshLedger(t testing.TB, kind string) (store.Ledger, string) {
	t.Helper()
	dsn := FreshDSN(t, kind)
	l, err := store.Open(context.Background(), dsn, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, dsn
}
