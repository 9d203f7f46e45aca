package sqlite_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/sqlite"
)

// TestHashedReadRefusesMangledHash: a canonical_sha256 that is not a
// sha256 (a row written outside the ledger) is a ledger failure pointing
// at verify, never a hash a decision would record.
func TestHashedReadRefusesMangledHash(t *testing.T) {
	path := tamperLedger(t)
	db := rawDB(t, path)
	mustExec(t, db, `INSERT INTO snapshots (seq, proposition_id, view_id, body, body_sha256, canonical_sha256, created_at)
		SELECT 99, proposition_id, 'v-smuggled', body, body_sha256, x'0102', created_at FROM snapshots WHERE seq = 1`)
	db.Close()
	l, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	first, err := l.SnapshotsSince(ctx, 0, 1)
	if err != nil || len(first) != 1 {
		t.Fatalf("first snapshot: %v %v", first, err)
	}
	v, err := l.Get(ctx, first[0].PropositionID, "v-smuggled")
	if err != nil {
		t.Fatalf("the plain read does not look at the hash: %v", err)
	}
	for name, read := range map[string]func() error{
		"LatestHashed": func() error { _, _, err := l.LatestHashed(ctx, v.PropositionID); return err },
	} {
		err := read()
		var le *ledger.Error
		if !errors.As(err, &le) || !strings.Contains(err.Error(), "canonical_sha256 is 2 bytes") || !strings.Contains(err.Error(), "verify") {
			t.Errorf("%s of a 2-byte hash: %v, want a ledger failure naming canonical_sha256 and verify", name, err)
		}
	}
}
