package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// TestForgettingKeepsTheRules forces the bounded-memory path of a large
// batch (forget after every few records) and checks that identity, re-put
// and refusal rules still see what the batch stored before forgetting.
func TestForgettingKeepsTheRules(t *testing.T) {
	old := maxRemembered
	maxRemembered = 3
	defer func() { maxRemembered = old }()
	l, err := Create(filepath.Join(t.TempDir(), "f.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var views []*warrant.View
	for i := range 12 {
		views = append(views, synthetic(t, i/4, i%4))
	}
	views = append(views, synthetic(t, 0, 1)) // identical re-put of a forgotten snapshot
	res, err := l.Put(context.Background(), views)
	if err != nil || res.Stored != 12 || res.Unchanged != 1 {
		t.Fatalf("put: %+v %v", res, err)
	}
	changed := synthetic(t, 1, 0)
	changed.ViewID = "v-new"
	changed.Checks[0].Result = warrant.Opposes // k-1-0 was stored with supports
	batch := []*warrant.View{synthetic(t, 5, 0), synthetic(t, 5, 1), synthetic(t, 5, 2), changed}
	_, err = l.Put(context.Background(), batch)
	var we *warrant.Error
	if !errors.As(err, &we) || we.Code != warrant.CodeImmutableRecord {
		t.Fatalf("redefined check after forgetting: %v", err)
	}
	if _, err := l.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func synthetic(t *testing.T, prop, snap int) *warrant.View {
	t.Helper()
	v, err := warrant.DecodeView(snapshottest.SyntheticView(prop, snap))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
