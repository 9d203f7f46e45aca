package snapshot_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/ewp-go/ewp/snapshot"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
	"github.com/ewp-go/ewp/warrant"
)

// memStore is the smallest store that keeps the §9 rules with this
// package alone; running the shared table against it checks the table and
// the rules without any database.
type memStore struct {
	snaps map[[2]string]snapshot.Sum
	idx   map[string]snapshot.Map
}

func (m *memStore) Put(v *warrant.View) (bool, error) {
	if err := snapshot.CheckSurrogates(v); err != nil {
		return false, err
	}
	key := [2]string{v.PropositionID, v.ViewID}
	if sum, ok := m.snaps[key]; ok {
		return false, snapshot.CheckSnapshot(sum, v)
	}
	idx := m.idx[v.PropositionID]
	if idx == nil {
		idx = snapshot.Map{}
		m.idx[v.PropositionID] = idx
	}
	fps, err := snapshot.Check(idx, v)
	if err != nil {
		return false, err
	}
	idx.Add(v.ViewID, fps)
	m.snaps[key] = snapshot.StoredSum(v)
	return true, nil
}

func TestHistoryTableInMemory(t *testing.T) {
	snapshottest.Run(t, func(*testing.T) snapshottest.Store {
		return &memStore{snaps: map[[2]string]snapshot.Sum{}, idx: map[string]snapshot.Map{}}
	})
}

const viewJSON = `{"proposition_id": "P", "view_id": "v1",
 "assertions": [{"assertion_id": "a1", "text": "x", "asserted_by": "me", "assertion_confidence": 0.5,
   "asserted_at": "2026-09-01T00:00:00Z", "source": {"source_id": "s1", "lineage_id": "L1", "origin_type": "tool",
   "origin_locator": "here", "snapshot_id": "s1", "content_hash": "h1", "observed_at": "2026-09-01T00:00:00Z"}}],
 "evidence": [
   {"evidence_id": "e1", "polarity": "supports", "content": "c1", "observed_at": "2026-09-01T00:00:00Z",
    "source": {"source_id": "s2", "lineage_id": "L2", "origin_type": "extract", "origin_locator": "there",
    "snapshot_id": "s2", "content_hash": "h2", "observed_at": "2026-09-01T00:00:00Z"}},
   {"evidence_id": "e2", "polarity": "opposes", "content": "c2", "observed_at": "2026-09-02T00:00:00Z",
    "source": {"source_id": "s2", "lineage_id": "L2", "origin_type": "extract", "origin_locator": "there",
    "snapshot_id": "s2", "content_hash": "h2", "observed_at": "2026-09-01T00:00:00Z"}}],
 "conflicts": [{"conflict_id": "c1", "status": "open", "proposition_ids": ["P", "Q"]}]}`

func decode(t *testing.T, s string) *warrant.View {
	t.Helper()
	v, err := warrant.DecodeView([]byte(s))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return v
}

func TestFingerprintsCoverEveryIdentity(t *testing.T) {
	fps := snapshot.Fingerprints(decode(t, viewJSON))
	var keys []string
	for _, f := range fps {
		keys = append(keys, string(f.Kind)+":"+f.ID+"@"+f.Field)
	}
	want := []string{"assertion:a1@assertions[0]", "evidence:e1@evidence[0]", "evidence:e2@evidence[1]",
		"conflict-participants:c1@conflicts[0].proposition_ids", "source:s1@assertions[0].source", "source:s2@evidence[0].source"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys\n got %v\nwant %v", keys, want)
	}
}

func TestFingerprintsIgnoreOrderAndConflictStatus(t *testing.T) {
	v := decode(t, viewJSON)
	w := decode(t, viewJSON)
	w.Evidence[0], w.Evidence[1] = w.Evidence[1], w.Evidence[0]
	w.Conflicts[0].Status, w.Conflicts[0].Note = warrant.StatusResolved, "done"
	w.Conflicts[0].PropositionIDs = []string{"Q", "P"}
	if !slices.Equal(sums(v), sums(w)) {
		t.Fatal("reordering records or resolving a conflict changed a record's identity")
	}
	w.Evidence[0].Content = "changed"
	if slices.Equal(sums(v), sums(w)) {
		t.Fatal("changing evidence content kept its identity")
	}
}

func sums(v *warrant.View) []string {
	var out []string
	for _, f := range snapshot.Fingerprints(v) {
		out = append(out, string(f.Kind)+f.ID+f.Sum.Hex())
	}
	slices.Sort(out)
	return out
}

func TestSumHexRoundTrip(t *testing.T) {
	f := snapshot.Fingerprints(decode(t, viewJSON))[0]
	got, ok := snapshot.ParseSum(f.Sum.Hex())
	if !ok || got != f.Sum {
		t.Fatal("ParseSum(Hex) does not round-trip")
	}
	if _, ok := snapshot.ParseSum("zz"); ok {
		t.Fatal("ParseSum accepted garbage")
	}
}

func TestCheckNamesTheEarlierView(t *testing.T) {
	idx := snapshot.Map{}
	idx.Add("v-old", snapshot.Fingerprints(decode(t, viewJSON)))
	v := decode(t, viewJSON)
	v.Evidence[1].Content = "rewritten"
	_, err := snapshot.Check(idx, v)
	we := wantCode(t, err, warrant.CodeImmutableRecord)
	if we.Field != "evidence[1]" || !contains(we.Rule, `"e2"`) || !contains(we.Rule, `"v-old"`) {
		t.Fatalf("refusal does not name the record and the earlier view: %v", we)
	}
}

func TestTrustedOrigins(t *testing.T) {
	v := decode(t, viewJSON)
	if got := snapshot.TrustedOrigins(v); !slices.Equal(got, []string{"tool"}) {
		t.Fatalf("TrustedOrigins = %v", got)
	}
	we := wantCode(t, snapshot.RequireAttestation(v, false), warrant.CodeUnattestedTrusted)
	if we.Field != "assertions[0].source.origin_type" {
		t.Fatalf("field = %q", we.Field)
	}
	if err := snapshot.RequireAttestation(v, true); err != nil {
		t.Fatalf("attested view refused: %v", err)
	}
	for _, o := range []string{"Tool", "inline:tool", "episode", "extract"} {
		if snapshot.IsTrusted(o) {
			t.Errorf("%q is trusted", o)
		}
	}
}

func wantCode(t *testing.T, err error, code string) *warrant.Error {
	t.Helper()
	var we *warrant.Error
	if !errors.As(err, &we) || we.Code != code {
		t.Fatalf("got %v, want %s", err, code)
	}
	return we
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "abc": "abc", "PostgreSQL": "postgresql", "Straße": "strasse", "ΩMEGA": "ωmega", "İ": "i̇",
	} {
		if got := snapshot.Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}
