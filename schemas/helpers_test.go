package schemas

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// sharedDir locates ../shared beside the repository root, or skips.
func sharedDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Skip("no go.mod above the test directory; cannot locate ../shared")
		}
		dir = filepath.Dir(dir)
	}
	shared := filepath.Join(dir, "..", "shared")
	if _, err := os.Stat(filepath.Join(shared, "ewp-pack")); err != nil {
		t.Skipf("shared test data not found at %s: %v", shared, err)
	}
	return shared
}

// corpusCase is one line of the differential corpus.
type corpusCase struct {
	ID   string          `json:"id"`
	Note string          `json:"note"`
	Doc  json.RawMessage `json:"doc"`
}

// eachCorpusCase calls fn for every case of the differential corpus.
func eachCorpusCase(t *testing.T, fn func(c corpusCase)) {
	t.Helper()
	path := filepath.Join(sharedDir(t), "ewp-differential", "public.jsonl.gz")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("corpus not found at %s", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("corpus line %d: %v", n, err)
		}
		fn(c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// packFiles returns the pack's files in dir ("fixtures", "invalid").
func packFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(sharedDir(t), "ewp-pack", dir, "*.json"))
	if len(files) == 0 {
		t.Fatalf("no files in ewp-pack/%s", dir)
	}
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = raw
	}
	return out
}

// kernelRefuses is the whole verdict of warrant_now on a document: decode,
// policy identity, and a parseable evaluated_at when one is given.
func kernelRefuses(raw []byte) error {
	doc, err := warrant.DecodeDocument(raw)
	if err != nil {
		return err
	}
	if doc.EvaluatedAt != "" {
		_, err = warrant.Evaluate(doc.View, doc.EvaluatedAt)
	}
	return err
}

// readShared reads a file under ../shared.
func readShared(t *testing.T, parts ...string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(append([]string{sharedDir(t)}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
