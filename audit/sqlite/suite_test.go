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
	}})
}
