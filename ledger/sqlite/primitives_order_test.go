package sqlite_test

import (
	"context"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/sqlite"
)

func appendRows(t *testing.T, l *sqlite.Ledger, rows ...ledger.PrimitiveRow) {
	t.Helper()
	err := l.AppendPrimitives(context.Background(), func([]ledger.PrimitiveRow) ([]ledger.PrimitiveRow, error) {
		return rows, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The grounding engine walks edges in graph insertion order, so a revised
// primitive keeps the place of its first revision, whatever its id sorts as.
func TestCurrentPrimitivesKeepFirstInsertionOrder(t *testing.T) {
	l := newLedger(t)
	appendRows(t, l, ledger.PrimitiveRow{ID: "z", NameFold: "zeta", Body: []byte(`{"v":1}`)},
		ledger.PrimitiveRow{ID: "a", NameFold: "alpha", Body: []byte(`{"v":1}`)})
	appendRows(t, l, ledger.PrimitiveRow{ID: "m", NameFold: "mu", Body: []byte(`{"v":1}`)})
	appendRows(t, l, ledger.PrimitiveRow{ID: "z", NameFold: "zeta", Body: []byte(`{"v":2}`)})
	cur, err := l.CurrentPrimitives(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range cur {
		got = append(got, r.ID+string(r.Body))
	}
	want := []string{`z{"v":2}`, `a{"v":1}`, `m{"v":1}`}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// Editing or deleting a primitive revision behind the ledger's back is
// caught by Verify. Deleting the newest revision is the dangerous case: the
// graph silently reverts to the previous one.
func TestPrimitiveTamperIsDetected(t *testing.T) {
	cases := []struct {
		name, trigger, sql string
		seq                int64
		what               string
	}{
		{"a folded name", "primitive_revisions_no_UPDATE", `UPDATE primitive_revisions SET name_fold = 'dir' WHERE seq = 2`, 2, "name_fold"},
		{"a primitive id", "primitive_revisions_no_UPDATE", `UPDATE primitive_revisions SET primitive_id = 'q' WHERE seq = 1`, 1, "primitive_id"},
		{"the newest revision deleted", "primitive_revisions_no_DELETE", `DELETE FROM primitive_revisions WHERE seq = 3`, 3, "gone"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newLedger(t)
			appendRows(t, l, ledger.PrimitiveRow{ID: "p", NameFold: "file", Body: []byte(`{"v":1}`)},
				ledger.PrimitiveRow{ID: "q", NameFold: "link", Body: []byte(`{"v":1}`)})
			appendRows(t, l, ledger.PrimitiveRow{ID: "p", NameFold: "file", Body: []byte(`{"v":2}`)})
			path := l.Path()
			l.Close()
			db := rawDB(t, path)
			mustExec(t, db, `DROP TRIGGER `+c.trigger)
			mustExec(t, db, c.sql)
			db.Close()
			verifyBroken(t, path, c.seq, "primitive_revisions", c.what)
		})
	}
}
