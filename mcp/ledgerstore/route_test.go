package ledgerstore

import (
	"context"
	"errors"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
)

func ledgerWith(t *testing.T, kind string, viewIDs ...string) store.Ledger {
	t.Helper()
	l, _ := FreshLedger(t, kind)
	for _, id := range viewIDs {
		v, err := warrant.DecodeView([]byte(`{"proposition_id": "P-1", "view_id": "` + id + `", "evidence": [{"evidence_id": "e-` + id + `",
 "polarity": "supports", "content": "c", "observed_at": "2026-09-01T00:00:00Z", "source": {"source_id": "s1", "lineage_id": "L1",
 "origin_type": "extract", "origin_locator": "x", "snapshot_id": "s1", "content_hash": "h", "observed_at": "2026-09-01T00:00:00Z"}}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Put(context.Background(), []*warrant.View{v}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// TestActionReadsGoToThePrimary: with a standby that lags (it lacks the
// primary's newest snapshot), a plain read is answered from the standby
// and the read an action rests on from the primary.
func TestActionReadsGoToThePrimary(t *testing.T) {
	EachStore(t, testActionReadsGoToThePrimary)
}

func testActionReadsGoToThePrimary(t *testing.T, kind string) {
	primary := ledgerWith(t, kind, "v1", "v2")
	standby := ledgerWith(t, kind, "v1")
	s := NewWith(standby, Options{Primary: primary})
	ctx := context.Background()
	if v, err := s.Latest(ctx, "P-1"); err != nil || v.ViewID != "v1" {
		t.Fatalf("plain read: %v %v, want the standby's v1", v, err)
	}
	if v, err := s.Latest(mcp.WithActionRead(ctx), "P-1"); err != nil || v.ViewID != "v2" {
		t.Fatalf("action read: %v %v, want the primary's v2", v, err)
	}
}

// TestUnavailableIsNamed: a failure the classifier calls unavailable
// reaches the server as mcp.ErrStoreUnavailable; without a classifier,
// or for other failures, it does not.
func TestUnavailableIsNamed(t *testing.T) {
	down := &ledger.Error{Op: "read snapshot", Err: errors.New("connection refused")}
	s := NewWith(nil, Options{Unavailable: func(err error) bool { return errors.Is(err, down) }})
	if err := s.stored(down); !errors.Is(err, mcp.ErrStoreUnavailable) || !errors.Is(err, down) {
		t.Errorf("unavailable: %v", err)
	}
	if err := s.stored(errors.New("disk on fire")); errors.Is(err, mcp.ErrStoreUnavailable) {
		t.Errorf("another failure named unavailable: %v", err)
	}
	if err := New(nil).stored(down); errors.Is(err, mcp.ErrStoreUnavailable) {
		t.Errorf("no classifier, still unavailable: %v", err)
	}
}
