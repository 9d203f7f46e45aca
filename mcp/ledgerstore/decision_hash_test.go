package ledgerstore_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/mcp"
	"github.com/ewp-go/ewp/mcp/ledgerstore"
	"github.com/ewp-go/ewp/store"
)

// A may_act decision over a real ledger records the canonical_sha256 the
// ledger stored, not one the server computes. To tell the two apart the
// stored hash is rewritten behind the ledger's back to all zeros, which
// is deliberately not the view's hash: the record must show the zeros.
// (ewp-ingest verify would report such a ledger; the hash a ledger
// stores is the true one, which ledgertest's HashedReads checks.)
func TestDecisionRecordsLedgerHash(t *testing.T) {
	ledgerstore.EachStore(t, testDecisionRecordsLedgerHash)
}

func testDecisionRecordsLedgerHash(t *testing.T, kind string) {
	dsn := editedLedger(t, kind, `UPDATE snapshots SET canonical_sha256 = zeroblob(32)`,
		`UPDATE snapshots SET canonical_sha256 = decode(repeat('00', 32), 'hex')`)
	l, err := store.Open(context.Background(), dsn, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ml := memlog.New(time.Now)
	srv := mcp.New(ledgerstore.New(l), mcp.WithDecisionLog(mcp.DecisionLog{Log: ml}))
	var out bytes.Buffer
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"may_act","arguments":{"proposition_id":"P",` +
		`"action":{"action_id":"a1","kind":"deploy","risk":"low","reversible":true}}}}` + "\n"
	if err := srv.ServeStdio(context.Background(), strings.NewReader(in), &out, false); err != nil {
		t.Fatal(err)
	}
	got, err := ml.List(context.Background(), audit.Filter{})
	if err != nil || len(got) != 1 {
		t.Fatalf("%d decisions on record (%v); answer %s", len(got), err, out.String())
	}
	if d := got[0]; d.ViewID != "v1" || d.ViewHash != strings.Repeat("0", 64) {
		t.Errorf("decision on %q with view_hash %q, want v1 with the ledger's stored (zeroed) hash; answer %s", d.ViewID, d.ViewHash, out.String())
	}
}

// A hashed read of a snapshot the kernel refuses fails as the plain read
// does: the ledger's fault, telling the operator to verify it.
func TestDamagedHashedRead(t *testing.T) { ledgerstore.EachStore(t, testDamagedHashedRead) }

func testDamagedHashedRead(t *testing.T, kind string) {
	l, err := store.Open(context.Background(), damagedLedger(t, kind), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, ctx := ledgerstore.New(l), mcp.WithActionRead(context.Background())
	_, plain := s.Latest(ctx, "P")
	_, _, hashed := s.LatestHashed(ctx, "P")
	if plain == nil || hashed == nil || hashed.Error() != plain.Error() || !strings.Contains(hashed.Error(), "ewp-ingest verify") {
		t.Errorf("hashed read: %v\nplain read: %v", hashed, plain)
	}
}
