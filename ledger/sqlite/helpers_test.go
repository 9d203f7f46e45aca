package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ewp-go/ewp/ledger"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/warrant"
)

// fixedNow makes created_at deterministic.
func fixedNow() time.Time { return time.Date(2026, 9, 21, 12, 0, 0, 0, time.UTC) }

func newLedger(t testing.TB) *sqlite.Ledger {
	t.Helper()
	l, err := sqlite.Create(filepath.Join(t.TempDir(), "ewp.db"), sqlite.Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func decode(t testing.TB, s string) *warrant.View {
	t.Helper()
	v, err := warrant.DecodeView([]byte(s))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return v
}

func put(t testing.TB, l *sqlite.Ledger, vs ...*warrant.View) ledger.PutResult {
	t.Helper()
	res, err := l.Put(context.Background(), vs)
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	return res
}

func wantCode(t testing.TB, err error, code string) *warrant.Error {
	t.Helper()
	var we *warrant.Error
	if !errors.As(err, &we) || we.Code != code {
		t.Fatalf("got %v, want %s", err, code)
	}
	return we
}

const viewP = `{"proposition_id": "P-db", "view_id": "v1", "subjects": ["db-1"],
 "assertions": [{"assertion_id": "a1", "text": "The production database runs PostgreSQL 13.", "asserted_by": "me",
   "assertion_confidence": 0.9, "asserted_at": "2026-09-01T00:00:00Z",
   "source": {"source_id": "s1", "lineage_id": "L1", "origin_type": "turn", "origin_locator": "chat",
   "snapshot_id": "s1", "content_hash": "h1", "observed_at": "2026-09-01T00:00:00Z"}}],
 "evidence": [{"evidence_id": "e1", "polarity": "supports", "content": "recalled", "observed_at": "2026-09-01T00:00:00Z",
   "source": {"source_id": "s1", "lineage_id": "L1", "origin_type": "turn", "origin_locator": "chat",
   "snapshot_id": "s1", "content_hash": "h1", "observed_at": "2026-09-01T00:00:00Z"}}]}`
