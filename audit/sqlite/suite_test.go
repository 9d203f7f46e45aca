package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/sqlite"
)

// TestSuite runs the decision log suite (audit/audittest), shared with
// the PostgreSQL store, against an SQLite file; further handles are
// further Opens of the file, as other processes would have.
func TestSuite(t *testing.T) {
	audittest.Run(t, audittest.Store{New: func(t testing.TB, now func() time.Time) (audittest.Log, func(testing.TB, bool) audittest.Log) {
		path := filepath.Join(t.TempDir(), "ewp.db.audit")
		l, err := sqlite.Create(path, sqlite.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l, func(t testing.TB, readOnly bool) audittest.Log {
			o, err := sqlite.Open(path, sqlite.Options{Now: now, ReadOnly: readOnly})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { o.Close() })
			return o
		}
	}, FailUses: failUses})
}

// failUses makes inserting into approval_uses fail, as a full disk
// would, through a trigger the test adds to the file and drops again (so
// that verify, which refuses a trigger the schema lacks, sees the log as
// the writer left it).
func failUses(t testing.TB, l audittest.Log) func() {
	db := rawDB(t, l.(*sqlite.Log).Path())
	mustExec(t, db, `CREATE TRIGGER full_disk BEFORE INSERT ON approval_uses BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`)
	return func() {
		mustExec(t, db, `DROP TRIGGER full_disk`)
		db.Close()
	}
}
