package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ewp-go/ewp/internal/sharedtest"
	"github.com/ewp-go/ewp/ledger/sqlite"
	"github.com/ewp-go/ewp/snapshot/snapshottest"
)

// BenchmarkIngest100k loads 100,000 views (25,000 propositions with four
// snapshots each) from JSON Lines into a new ledger on disk, as
// `ewp-ingest --attest-trusted-origins` does: split, validate on every
// core, store as one transaction. Target: 20,000 views/s on 2 cores.
func BenchmarkIngest100k(b *testing.B) {
	benchLoad(b, snapshottest.SyntheticLines(100_000, 4), 100_000, 0)
}

// BenchmarkIngestFixtures100k loads 100,000 views made from the reference
// pack's fixtures (each copy under its own proposition id), the mixed
// shape of real evidence: 1.8 KB per view on average, fixture documents
// with evaluated_at among them.
func BenchmarkIngestFixtures100k(b *testing.B) {
	data := fixtureLines(b, 100_000)
	benchLoad(b, data, 100_000, 0)
}

// BenchmarkIngest200Assertions loads 1,000 views of 200 assertions each:
// the shape where records, not views, are the unit of work.
func BenchmarkIngest200Assertions(b *testing.B) {
	const n, per = 1000, 200
	var buf bytes.Buffer
	for i := range n {
		buf.Write(wideView(i, per))
		buf.WriteByte('\n')
	}
	benchLoad(b, buf.Bytes(), n, n*per)
}

func benchLoad(b *testing.B, data []byte, views, records int) {
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l, err := sqlite.Create(filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := (&Loader{L: l, Opt: Options{AttestTrustedOrigins: true}}).LoadFile(context.Background(), "bench.jsonl", data)
		if err != nil || rep.Stored != views {
			b.Fatalf("stored %d of %d: %v, %d refused, first %v", rep.Stored, views, err, len(rep.Refused), rep.Refused[:min(1, len(rep.Refused))])
		}
		b.StopTimer()
		l.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(views*b.N)/b.Elapsed().Seconds(), "views/s")
	if records > 0 {
		b.ReportMetric(float64(records*b.N)/b.Elapsed().Seconds(), "records/s")
	}
}

// wideView is one view with per assertions, all from one source.
func wideView(prop, per int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"proposition_id": "P-wide-%d", "view_id": "v-%d", "assertions": [`, prop, prop)
	for k := range per {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"assertion_id": "a-%d", "text": "Assertion %d of proposition %d says the service answers.", "asserted_by": "agent", "assertion_confidence": 0.7, "asserted_at": "2026-09-01T10:00:00Z", "source": {"source_id": "s-%d", "lineage_id": "L-%d", "origin_type": "turn", "origin_locator": "chat:%d", "snapshot_id": "snap:%d", "content_hash": "sha256:%d", "observed_at": "2026-09-01T00:00:00Z"}}`,
			k, k, prop, k, k%7, k, k, k)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// fixtureLines returns n views as JSON Lines, cycling through the reference
// pack's fixtures; copy i of a fixture has its proposition ids suffixed
// with -i, so every line is a new proposition.
func fixtureLines(b testing.TB, n int) []byte {
	pack := filepath.Join(sharedtest.Dir(b), "ewp-pack")
	var docs [][]byte
	for _, f := range sharedtest.PackFiles(b, pack, "fixtures") {
		var c bytes.Buffer
		if json.Compact(&c, f.Data) != nil {
			continue
		}
		if _, err := DecodeItem(c.Bytes(), true); err == nil {
			docs = append(docs, c.Bytes())
		}
	}
	var out bytes.Buffer
	for i := range n {
		out.Write(renameProps(docs[i%len(docs)], "-"+strconv.Itoa(i)))
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// renameProps suffixes every "P-..." string value (proposition ids, in
// the view and its conflicts) so copies do not collide in one ledger.
func renameProps(doc []byte, suffix string) []byte {
	var out []byte
	for {
		i := bytes.Index(doc, []byte(`"P-`))
		if i < 0 {
			return append(out, doc...)
		}
		j := bytes.IndexAny(doc[i+1:], `":`) // a variant keeps its ":suffix" after ours
		out = append(out, doc[:i+1+j]...)
		out = append(out, suffix...)
		doc = doc[i+1+j:]
	}
}

// BenchmarkSplitReader is the splitter alone over 20,000 synthetic views:
// its grammar check is the part of a load the old in-memory splitter did
// not do.
func BenchmarkSplitReader(b *testing.B) {
	data := snapshottest.SyntheticLines(20_000, 4)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		n := 0
		if _, err := SplitReader(bytes.NewReader(data), SplitOptions{}, func(Item) error { n++; return nil }); err != nil || n != 20_000 {
			b.Fatal(n, err)
		}
	}
}

// TestWriteBenchInputs writes the inputs of the two ingest shapes above
// as JSON Lines files, for measuring ewp-ingest binaries against each
// other (scripts/ingest-compare): fixtures.jsonl (100,000 views from the
// reference pack's fixtures, as BenchmarkIngestFixtures100k) and
// assertions200.jsonl (1,000 views of 200 assertions, as
// BenchmarkIngest200Assertions), into the directory
// $EWP_INGEST_INPUTS. Without it the test does nothing.
func TestWriteBenchInputs(t *testing.T) {
	dir := os.Getenv("EWP_INGEST_INPUTS")
	if dir == "" {
		t.Skip("EWP_INGEST_INPUTS is not set: nothing to write")
	}
	var wide bytes.Buffer
	for i := range 1000 {
		wide.Write(wideView(i, 200))
		wide.WriteByte('\n')
	}
	for name, data := range map[string][]byte{
		"fixtures.jsonl":      fixtureLines(t, 100_000),
		"assertions200.jsonl": wide.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
