package jsonstore

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/warrant"
)

// tempDir is a fresh directory, on tmpfs when the machine has one: the
// corpus round trip creates thousands of stores, and every commit fsyncs.
// The code exercised is the same on any file system.
func tempDir(t testing.TB) string {
	t.Helper()
	if d, err := os.MkdirTemp("/dev/shm", "ewp-jsonstore-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	return t.TempDir()
}

func testStore(t testing.TB) *Store {
	t.Helper()
	s, err := Create(filepath.Join(tempDir(t), "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustView(t testing.TB, js string) *warrant.View {
	t.Helper()
	v, err := warrant.DecodeView([]byte(js))
	if err != nil {
		t.Fatalf("test view does not decode: %v\n%s", err, js)
	}
	return v
}

func mustPut(t testing.TB, s *Store, views ...*warrant.View) PutResult {
	t.Helper()
	res, err := s.Put(context.Background(), views)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustVerify(t testing.TB, s *Store) VerifyReport {
	t.Helper()
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return rep
}

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

type corpusCase struct {
	ID  string          `json:"id"`
	Doc json.RawMessage `json:"doc"`
}

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
