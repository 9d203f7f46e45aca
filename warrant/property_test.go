package warrant_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// fixtureDocs returns fixture-format documents from the project's own pack
// and, when present, the reference pack beside the checkout.
func fixtureDocs(t testing.TB) map[string][]byte {
	docs := map[string][]byte{}
	for _, glob := range []string{"../fixtures/pack/fixtures/*.json", "../../shared/ewp-pack/fixtures/*.json"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs[f] = b
		}
	}
	if len(docs) == 0 {
		t.Fatal("no fixtures in ../fixtures/pack/fixtures: the project's pack is part of the repository")
	}
	return docs
}

func decodeJSON(t testing.TB, b []byte) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func encodeJSON(t testing.TB, m map[string]any) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func evalDoc(t testing.TB, b []byte) (*warrant.View, *warrant.WarrantView) {
	doc, err := warrant.DecodeDocument(b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	w, err := warrant.Evaluate(doc.View, doc.EvaluatedAt)
	if err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	return doc.View, w
}

func axes(w *warrant.WarrantView) [5]string {
	a := w.Warrant
	return [5]string{a.Acceptance, a.Conflict, a.Verification, a.Currency, a.Sufficiency}
}

// shuffle permutes every record array and string list of a view.
func shuffle(r *rand.Rand, m map[string]any) {
	for _, k := range []string{"assertions", "evidence", "checks", "conflicts", "lineage", "subjects", "omitted_sources"} {
		if list, ok := m[k].([]any); ok {
			r.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
		}
	}
	if checks, ok := m["checks"].([]any); ok {
		for _, c := range checks {
			if subj, ok := c.(map[string]any)["subjects"].([]any); ok {
				r.Shuffle(len(subj), func(i, j int) { subj[i], subj[j] = subj[j], subj[i] })
			}
		}
	}
}

// Record order never changes the axes or the derived view id.
func TestRecordOrderDoesNotMatter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, b := range fixtureDocs(t) {
		m := decodeJSON(t, b)
		delete(m, "view_id")
		v0, w0 := evalDoc(t, encodeJSON(t, m))
		for round := 0; round < 5; round++ {
			shuffle(r, m)
			v1, w1 := evalDoc(t, encodeJSON(t, m))
			if axes(w0) != axes(w1) {
				t.Errorf("%s: shuffled records changed the axes: %v -> %v", name, axes(w0), axes(w1))
			}
			if v0.ViewID != v1.ViewID || !v1.ViewIDDerived {
				t.Errorf("%s: shuffled records changed the derived view id: %s -> %s", name, v0.ViewID, v1.ViewID)
			}
		}
	}
}

// futureRecords are records observed a year after any fixture's T, from a
// source of their own, one of each kind, opposing where that could matter.
func futureRecords(prop string) map[string]any {
	src := map[string]any{
		"source_id": "zz-future-src", "lineage_id": "zz-future-lineage", "origin_type": "tool",
		"origin_locator": "loc:future", "snapshot_id": "snap:future", "content_hash": "sha256:future",
		"observed_at": "2099-01-01T00:00:00Z",
	}
	return map[string]any{
		"assertions": map[string]any{"assertion_id": "zz-future-a", "text": "future", "asserted_by": "agent",
			"assertion_confidence": 1, "source": src, "asserted_at": "2099-01-01T00:00:00Z", "proposition_id": prop},
		"evidence": map[string]any{"evidence_id": "zz-future-e", "polarity": "opposes", "source": src,
			"content": "future", "observed_at": "2099-01-01T00:00:00Z"},
		"checks": map[string]any{"check_id": "zz-future-k", "method": "human_attestation", "scope": "x",
			"source": src, "observed_at": "2099-01-01T00:00:00Z", "result": "opposes"},
	}
}

// Adding a record that is not available at T (observed in the future)
// never changes the axes or the lineage count.
func TestFutureRecordsChangeNothing(t *testing.T) {
	for name, b := range fixtureDocs(t) {
		_, w0 := evalDoc(t, b)
		for kind, rec := range futureRecords(w0.PropositionID) {
			m := decodeJSON(t, b)
			list, _ := m[kind].([]any)
			m[kind] = append(list, rec)
			_, w1 := evalDoc(t, encodeJSON(t, m))
			if axes(w0) != axes(w1) || w0.IndependentLineageCount != w1.IndependentLineageCount {
				t.Errorf("%s: a future %s record changed the warrant: %v/%d -> %v/%d", name, kind,
					axes(w0), w0.IndependentLineageCount, axes(w1), w1.IndependentLineageCount)
			}
		}
	}
}

// Encode is the stored form: decoding it gives the same view back, with
// the same canonical form and the same warrant.
func TestEncodeRoundTrip(t *testing.T) {
	for name, b := range fixtureDocs(t) {
		doc, err := warrant.DecodeDocument(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := warrant.DecodeView(warrant.Encode(doc.View))
		if err != nil {
			t.Fatalf("%s: stored form refused: %v", name, err)
		}
		if !bytes.Equal(warrant.Canonical(back), warrant.Canonical(doc.View)) || back.ViewID != doc.View.ViewID {
			t.Errorf("%s: stored form does not round-trip", name)
		}
		if back.AdapterMeta != doc.View.AdapterMeta {
			t.Errorf("%s: adapter_meta %s came back as %s", name, doc.View.AdapterMeta, back.AdapterMeta)
		}
	}
}
