package postgres_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/postgres"
	"github.com/ewp-go/ewp/internal/pgtest"
)

var ctx = context.Background()

// newDB makes a fresh database with the log's schema (a copy of a
// template Init ran on once) and returns its URL.
func newDB(t testing.TB) string {
	t.Helper()
	tpl := pgtest.Template(t, fmt.Sprintf("ewp_audit_tpl_%d", os.Getpid()), func(url string) error {
		return postgres.Init(ctx, url, "")
	})
	return pgtest.DBFrom(t, tpl)
}

func openLog(t testing.TB, url string, opt postgres.Options) *postgres.Log {
	t.Helper()
	l, err := postgres.Open(ctx, url, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestSuite runs the decision log suite (audit/audittest), shared with
// the SQLite store, against a real PostgreSQL server; further handles are
// further pools on the database, as other ewp-mcp replicas would have.
func TestSuite(t *testing.T) {
	audittest.Run(t, audittest.Store{New: func(t testing.TB, now func() time.Time) (audittest.Log, func(testing.TB, bool) audittest.Log) {
		url := newDB(t)
		return openLog(t, url, postgres.Options{Now: now}), func(t testing.TB, readOnly bool) audittest.Log {
			return openLog(t, url, postgres.Options{Now: now, ReadOnly: readOnly})
		}
	}})
}
