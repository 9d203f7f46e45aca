package jsonstore

import (
	"context"
	"testing"

	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// tableStore adapts the store to the shared §9 history table.
type tableStore struct{ s *Store }

func (ts tableStore) Put(v *warrant.View) (bool, error) {
	res, err := ts.s.Put(context.Background(), []*warrant.View{v})
	if err != nil {
		return false, err
	}
	return res.Stored == 1, nil
}

// TestHistory runs the same §9 table as the SQLite ledger, and checks
// after every case that the files on disk re-derive their indexes.
func TestHistory(t *testing.T) {
	snapshottest.Run(t, func(t *testing.T) snapshottest.Store {
		s := testStore(t)
		t.Cleanup(func() { mustVerify(t, s) })
		return tableStore{s}
	})
}
