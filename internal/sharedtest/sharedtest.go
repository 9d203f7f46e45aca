// Package sharedtest gives tests the read-only material that sits beside
// the checkout in ../shared (the reference pack, the differential corpus,
// the grounding pack). Tests that need it skip, with a reason, when it is
// absent; CI always has it.
package sharedtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ewp-go/ewp/conformance/corpus"
	"github.com/ewp-go/ewp/internal/testskip"
)

// Dir returns the ../shared directory beside the module root, or skips
// the test when there is none.
func Dir(t testing.TB) string {
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
			t.Skip(testskip.Message(testskip.Shared, "no go.mod above the test directory to find it from"))
		}
		dir = filepath.Dir(dir)
	}
	shared := filepath.Join(dir, "..", "shared")
	if _, err := os.Stat(shared); err != nil {
		t.Skip(testskip.Message(testskip.Shared, fmt.Sprintf("not found at %s (expected beside the repository): %v", shared, err)))
	}
	return shared
}

// Path joins elems onto Dir, skipping the test when that file is absent.
func Path(t testing.TB, elems ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{Dir(t)}, elems...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skip(testskip.Message(testskip.Shared, fmt.Sprintf("%s not found: %v", p, err)))
	}
	return p
}

// PackFile is one JSON document of a pack, by its file name.
type PackFile struct {
	Name string
	Data []byte
}

// PackFiles returns the *.json files of a pack's sub directory ("fixtures",
// "invalid", ...) in name order. A pack with none fails the test: a test
// over no documents would pass whatever the code does.
func PackFiles(t testing.TB, pack, sub string) []PackFile {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(pack, sub, "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no %s/*.json in %s: %v", sub, pack, err)
	}
	out := make([]PackFile, len(names))
	for i, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = PackFile{filepath.Base(name), data}
	}
	return out
}

// CorpusCase is one case of the differential corpus: a fixture-format
// document, kept as its exact JSON text, and the reference's verdict.
type CorpusCase = corpus.Case

// EachCorpusCase calls fn with every case of the public differential
// corpus, in file order, numbered from 1.
func EachCorpusCase(t testing.TB, fn func(n int, c CorpusCase)) {
	t.Helper()
	err := corpus.Each(Path(t, "ewp-differential", "public.jsonl.gz"), func(n int, c CorpusCase) error {
		fn(n, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
