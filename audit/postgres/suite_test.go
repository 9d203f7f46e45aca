package postgres_test

import (
	"context"
	"fmt"
	"os"
	"sync"
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
		l := openLog(t, url, postgres.Options{Now: now})
		urls.Store(l, url)
		return l, func(t testing.TB, readOnly bool) audittest.Log {
			return openLog(t, url, postgres.Options{Now: now, ReadOnly: readOnly})
		}
	}, FailUses: failUses})
}

// urls are the suite's logs' databases, by log.
var urls sync.Map

// failUses makes inserting into approval_uses fail, as a full disk
// would (SQLSTATE 53100), through a trigger the test adds as the
// database's owner and drops again (so that verify, which refuses a
// trigger the schema lacks, sees the log as the writer left it).
func failUses(t testing.TB, l audittest.Log) func() {
	url, _ := urls.Load(l)
	db := connect(t, url.(string))
	mustExec(t, db, `CREATE FUNCTION ewp_audit.full_disk() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$`)
	mustExec(t, db, `CREATE TRIGGER full_disk BEFORE INSERT ON ewp_audit.approval_uses FOR EACH ROW EXECUTE FUNCTION ewp_audit.full_disk()`)
	return func() {
		mustExec(t, db, `DROP TRIGGER full_disk ON ewp_audit.approval_uses`)
		mustExec(t, db, `DROP FUNCTION ewp_audit.full_disk()`)
	}
}
