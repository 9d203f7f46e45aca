package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/internal/pgtest"
	"github.com/ewp-go/ewp/store"
)

// eachStore runs fn as subtests /sqlite and /postgres: the same command
// line on both ledgers (issue #13). Without a PostgreSQL server the
// /postgres subtest skips loudly, or fails under CI (see internal/pgtest).
func eachStore(t *testing.T, fn func(t *testing.T, kind string)) {
	for _, k := range []string{"sqlite", "postgres"} {
		t.Run(k, func(t *testing.T) { fn(t, k) })
	}
}

// freshDB is a --db for a new ledger of kind, which the first load
// creates: a file not yet there, or an empty schema (its own search_path)
// in a database shared by the package's tests.
func freshDB(t testing.TB, kind string) string {
	t.Helper()
	if kind == "postgres" {
		return pgtest.FreshSchema(t)
	}
	return filepath.Join(t.TempDir(), "ewp.db")
}

// openReader opens the ledger at db for reading, as ewp-mcp does.
func openReader(db string) (store.Ledger, error) {
	return store.Open(context.Background(), db, store.Options{ReadOnly: true})
}
