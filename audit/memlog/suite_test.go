package memlog_test

import (
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit/audittest"
	"github.com/ewp-go/ewp/audit/memlog"
)

// TestSuite runs the decision log suite (audit/audittest), shared with
// the SQLite and PostgreSQL stores, against the in-memory log; further
// handles share its state, as further opens of one file would.
func TestSuite(t *testing.T) {
	audittest.Run(t, audittest.Store{New: func(t testing.TB, now func() time.Time) (audittest.Log, func(testing.TB, bool) audittest.Log) {
		l := memlog.New(now)
		t.Cleanup(func() { l.Close() })
		return l, func(t testing.TB, readOnly bool) audittest.Log {
			h := l.Handle(readOnly)
			t.Cleanup(func() { h.Close() })
			return h
		}
	}})
}
