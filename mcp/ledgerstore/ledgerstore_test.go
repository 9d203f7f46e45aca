package ledgerstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/mcp/ledgerstore"
)

// A proposition the ledger does not hold is mcp.ErrNotFound, which the
// server turns into its own refusal; other errors pass through as they are.
func TestMissingIsNotFound(t *testing.T) { ledgerstore.EachStore(t, testMissingIsNotFound) }

func testMissingIsNotFound(t *testing.T, kind string) {
	l, _ := ledgerstore.FreshLedger(t, kind)
	s := ledgerstore.New(l)
	ctx := context.Background()
	if _, err := s.Latest(ctx, "P-none"); !errors.Is(err, mcp.ErrNotFound) {
		t.Errorf("Latest: %v, want mcp.ErrNotFound", err)
	}
	if _, err := s.Get(ctx, "P-none", "v1"); !errors.Is(err, mcp.ErrNotFound) {
		t.Errorf("Get: %v, want mcp.ErrNotFound", err)
	}
	if got, err := s.List(ctx, "", 10); err != nil || len(got) != 0 {
		t.Errorf("List on an empty ledger: %v, %v", got, err)
	}
	if s.Ledger() != l {
		t.Error("Ledger is not the ledger served")
	}
}
