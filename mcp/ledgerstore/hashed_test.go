package ledgerstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/warrant"
)

// canonicalHex is the hash a decision must record for v.
func canonicalHex(v *warrant.View) string {
	sum := sha256.Sum256(warrant.Canonical(v))
	return hex.EncodeToString(sum[:])
}

// TestHashedReads: LatestHashed routes as Latest does
// (an action read to the primary, others to the standby), return the
// stored hash of the view it returns, and maps a missing snapshot to
// mcp.ErrNotFound.
func TestHashedReads(t *testing.T) { EachStore(t, testHashedReads) }

func testHashedReads(t *testing.T, kind string) {
	primary := ledgerWith(t, kind, "v1", "v2")
	standby := ledgerWith(t, kind, "v1")
	s := NewWith(standby, Options{Primary: primary})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		ctx  context.Context
		want string
	}{{"plain read", ctx, "v1"}, {"action read", mcp.WithActionRead(ctx), "v2"}} {
		v, h, err := s.LatestHashed(c.ctx, "P-1")
		if err != nil || v.ViewID != c.want || h != canonicalHex(v) {
			t.Errorf("%s: %v %q %v, want %s with the hash of its canonical form", c.name, v, h, err, c.want)
		}
	}
	if _, _, err := s.LatestHashed(mcp.WithActionRead(ctx), "P-none"); !errors.Is(err, mcp.ErrNotFound) {
		t.Errorf("LatestHashed of a missing proposition: %v, want mcp.ErrNotFound", err)
	}
}

// plainLedger hides a ledger's hashed reads, as a Ledger that only routes
// reads (ewp-mcp's standby router) does.
type plainLedger struct{ Ledger }

// A Ledger without hashed reads is served all the same, with no hash:
// the server then computes it.
func TestHashedReadsOfAPlainLedger(t *testing.T) { EachStore(t, testHashedReadsOfAPlainLedger) }

func testHashedReadsOfAPlainLedger(t *testing.T, kind string) {
	s := New(plainLedger{ledgerWith(t, kind, "v1")})
	ctx := context.Background()
	if v, h, err := s.LatestHashed(ctx, "P-1"); err != nil || v.ViewID != "v1" || h != "" {
		t.Errorf("LatestHashed: %v %q %v, want v1 and no hash", v, h, err)
	}
	if _, _, err := s.LatestHashed(ctx, "P-none"); !errors.Is(err, mcp.ErrNotFound) {
		t.Errorf("missing: %v, want mcp.ErrNotFound", err)
	}
}
