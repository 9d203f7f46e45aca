package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ewp-go/ewp/audit"
	"github.com/ewp-go/ewp/audit/memlog"
	"github.com/ewp-go/ewp/warrant"
)

// sentinelHash is what hashedFake says every snapshot hashes to. It is
// deliberately not the hash of any view: a decision record showing it
// proves the server took the store's hash, where canonicalising the view
// would have recorded the real one. A real HashedStore returns the true
// hash (the ledgers' suite, HashedReads, checks that they do).
var sentinelHash = strings.Repeat("5e", 32)

// hashedFake is the fake store as a HashedStore answering hash for every
// snapshot; it notes how its hashed reads were asked.
type hashedFake struct {
	*fakeStore
	hash string

	mu           sync.Mutex
	latestHashed int
	actionReads  int
}

func (h *hashedFake) LatestHashed(ctx context.Context, pid string) (*warrant.View, string, error) {
	h.mu.Lock()
	h.latestHashed++
	if IsActionRead(ctx) {
		h.actionReads++
	}
	h.mu.Unlock()
	v, err := h.Latest(ctx, pid)
	if err != nil {
		return nil, "", err
	}
	return v, h.hash, nil
}

// hashedServer serves st, with an in-memory decision log unless logged is
// false.
func hashedServer(t *testing.T, st Store, logged bool) (*Server, *memlog.Log) {
	t.Helper()
	ml := memlog.New(func() time.Time { return testNow })
	opts := []Option{WithClock(func() time.Time { return testNow }), WithLogger(quietLogger())}
	if logged {
		opts = append(opts, WithDecisionLog(testLog(ml)))
	}
	return New(st, opts...), ml
}

// recordedHash makes one may_act call and returns the view hash its
// decision recorded.
func recordedHash(t *testing.T, srv *Server, ml *memlog.Log) string {
	t.Helper()
	out := mustOK(t, call(t, dialInProcess(t, srv), "may_act", confirmArgs()))
	d, err := ml.Decision(context.Background(), decisionID(t, out))
	if err != nil {
		t.Fatal(err)
	}
	if d.ViewID != "v-tentative" {
		t.Fatalf("decision on view %q, want v-tentative", d.ViewID)
	}
	return d.ViewHash
}

// cachedHashes is how many view hashes the server computed and kept.
func cachedHashes(srv *Server) int { return srv.gate.CachedViewHashes() }

// A HashedStore's stored hash is what the decision records: read with the
// snapshot, as an action read, and the view is not canonicalised again
// (the server's cache of computed hashes stays empty).
func TestDecisionRecordsStoredViewHash(t *testing.T) {
	st := &hashedFake{fakeStore: seeded(t), hash: sentinelHash}
	srv, ml := hashedServer(t, st, true)
	if got := recordedHash(t, srv, ml); got != sentinelHash {
		t.Errorf("view_hash %s, want the store's %s", got, sentinelHash)
	}
	if st.latestHashed != 1 || st.actionReads != 1 {
		t.Errorf("%d hashed reads, %d of them action reads; want the one may_act read, as an action read", st.latestHashed, st.actionReads)
	}
	if n := cachedHashes(srv); n != 0 {
		t.Errorf("the server computed %d view hashes; the store gave it the one it needed", n)
	}
	// A proposition the store lacks is refused as with a plain Store.
	c := dialInProcess(t, srv)
	mustRefuse(t, call(t, c, "may_act", obj{"proposition_id": "P-none", "action": action("low", true)}), warrant.CodeMissingView)
	got, err := ml.List(context.Background(), audit.Filter{Outcome: audit.OutcomeRefused})
	if err != nil || len(got) != 1 || got[0].Code != warrant.CodeMissingView || got[0].ViewHash != "" {
		t.Errorf("the refusal on record: %+v %v", got, err)
	}
}

// A store that cannot give the hash — not a HashedStore, or one
// answering "" — gets it computed: sha256 of the canonical form.
func TestDecisionComputesViewHashWithoutStoredOne(t *testing.T) {
	plain := seeded(t)
	latest, err := plain.Latest(context.Background(), "P-tentative")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(warrant.Canonical(latest))
	want := hex.EncodeToString(sum[:])
	for name, st := range map[string]Store{
		"plain Store":           plain,
		"HashedStore without":   &hashedFake{fakeStore: seeded(t), hash: ""},
		"HashedStore, computed": &hashedFake{fakeStore: seeded(t), hash: want},
	} {
		srv, ml := hashedServer(t, st, true)
		if got := recordedHash(t, srv, ml); got != want {
			t.Errorf("%s: view_hash %s, want sha256 of the canonical form %s", name, got, want)
		}
	}
}

// Without a decision log nothing records a hash, so may_act makes the
// plain read.
func TestNoDecisionLogReadsPlainly(t *testing.T) {
	st := &hashedFake{fakeStore: seeded(t), hash: sentinelHash}
	srv, _ := hashedServer(t, st, false)
	mustOK(t, call(t, dialInProcess(t, srv), "may_act", confirmArgs()))
	if st.latestHashed != 0 {
		t.Errorf("%d hashed reads without a decision log", st.latestHashed)
	}
}
