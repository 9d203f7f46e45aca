package ledgertest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/ingest"
	"github.com/ewp-go/ewp/internal/sharedtest"
	"github.com/ewp-go/ewp/store"
	"github.com/ewp-go/ewp/warrant"
)

// oddMetaView has an adapter_meta holding the text `, "view_id": ` and a
// view_id that does too: the put's shortcut to the canonical hash
// (snapshot.CanonicalSum) cuts the stored body at the last such text, so
// this is the view most likely to be hashed wrongly.
const oddMetaView = `{"proposition_id": "P-odd", "view_id": "v, \"view_id\": 1",
 "adapter_meta": {"view_id": ", \"view_id\": ", "x": [1, {"a": null}]}}`

// testHashedReads: LatestHashed returns the view Latest returns, with the
// stored canonical_sha256 equal to sha256(warrant.Canonical(view)) for
// snapshots written every way a ledger is written — Put, an append, and
// ewp-ingest's own path (ingest.Loader over a file and over a stream) —
// and refuses what Latest refuses.
func testHashedReads(t *testing.T, fresh Fresh) {
	ctx := context.Background()
	l := Open(t, fresh(t), false)
	put(t, l, decode(t, ViewP), decode(t, oddMetaView))
	if _, err := l.AppendEvidence(ctx, "P-db", evidence("e2", "h2")); err != nil {
		t.Fatal(err)
	}
	ld := &ingest.Loader{L: l, Opt: ingest.Options{AttestTrustedOrigins: true}}
	quick, err := os.ReadFile(sharedtest.Path(t, "ewp-pack", "quickstart-example.json"))
	if err != nil {
		t.Fatal(err)
	}
	stream := strings.ReplaceAll(strings.ReplaceAll(oddMetaView, "\n", ""), "P-odd", "P-odd-streamed") + "\n" +
		strings.ReplaceAll(strings.ReplaceAll(ViewP, "\n", ""), "P-db", "P-db-streamed") + "\n"
	for _, in := range []ingest.Input{
		{Name: "quickstart-example.json", R: strings.NewReader(string(quick))},
		{Name: "stdin", R: strings.NewReader(stream), Stream: true},
	} {
		rep, err := ld.Load(ctx, in)
		if err != nil || rep.Stored == 0 || len(rep.Refused) != 0 {
			t.Fatalf("ingest %s: %+v %v", in.Name, rep, err)
		}
	}
	n := checkAllHashed(t, l)
	if n < 7 {
		t.Fatalf("checked %d propositions; the ingested ones are missing", n)
	}
	_, _, err = l.LatestHashed(ctx, "P-none")
	wantCode(t, err, warrant.CodeMissingView)
}

// checkAllHashed checks the hashed read of every proposition's latest
// snapshot and returns how many it checked.
func checkAllHashed(t *testing.T, l store.Ledger) int {
	ctx := context.Background()
	props, err := l.List(ctx, "", 500)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range props {
		hist, err := l.History(ctx, p.PropositionID)
		if err != nil {
			t.Fatal(err)
		}
		n++
		v, sum, err := l.LatestHashed(ctx, p.PropositionID)
		checkHashed(t, l, fmt.Sprintf("LatestHashed(%q)", p.PropositionID), v, sum, err,
			func() (*warrant.View, error) { return l.Latest(ctx, p.PropositionID) })
		if v != nil && v.ViewID != hist[len(hist)-1].ViewID {
			t.Errorf("LatestHashed(%q) is %q, not the last stored %q", p.PropositionID, v.ViewID, hist[len(hist)-1].ViewID)
		}
	}
	return n
}

// checkHashed compares one hashed read with the plain read and with the
// canonical form computed from scratch.
func checkHashed(t *testing.T, l store.Ledger, what string, v *warrant.View, sum [32]byte, err error, plain func() (*warrant.View, error)) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	want, err := plain()
	if err != nil {
		t.Fatalf("%s, read plainly: %v", what, err)
	}
	if string(warrant.Encode(v)) != string(warrant.Encode(want)) {
		t.Errorf("%s returned another view than the plain read", what)
	}
	if canon := sha256.Sum256(warrant.Canonical(want)); sum != canon {
		t.Errorf("%s: stored hash %x, but sha256 of the canonical form is %x", what, sum, canon)
	}
}
